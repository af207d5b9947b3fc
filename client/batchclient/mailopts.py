"""qsub -A, -m and -M, checked as OpenPBS checks Account_Name, Mail_Points and Mail_Users
(``verify_value_mailpoints``, ``verify_value_mailusers``). batchd keeps them and shows
them in ``qstat -f``; it sends no mail."""

from __future__ import annotations

import re

_POINTS = re.compile(r"^(n|[abe]|[abej]{2,})$")
_USERS = re.compile(r"^[^\s,]+(,[^\s,]+)*$")
ACCOUNT_MAX = 256  # what batchd keeps of an account name
USERS_MAX = 1024


NOT_AN_ARRAY = "mail option 'j' can not be used without array job"


def mail_points(text: str) -> str:
    """``n``, or letters of ``abej``: a (abort), b (begin), e (end), j (subjobs: arrays
    only, checked once every option is known). ValueError in qsub's words."""
    value = text.lstrip()
    if not _POINTS.match(value):
        raise ValueError("illegal -m value")
    return value


def mail_users(text: str) -> str:
    """``user[@host][,user[@host]...]``."""
    if len(text) > USERS_MAX or not _USERS.match(text):
        raise ValueError("illegal -M value")
    return text


def account(text: str) -> str:
    if not text or len(text) > ACCOUNT_MAX:
        raise ValueError("illegal -A value")
    return text
