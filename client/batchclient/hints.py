"""The names of ``typing`` the commands' annotations use, without importing ``typing``.

``typing`` costs every command about 2 ms of its start, and with ``from __future__
import annotations`` its names are needed by the type checker only (mypy takes
``if TYPE_CHECKING:`` as true, whatever TYPE_CHECKING is bound to). At run time they
stand for ``object``, which is what a runtime alias such as ``dict[str, Any]`` then
holds.
"""

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any as Any
    from typing import NoReturn as NoReturn
else:
    Any = NoReturn = object
