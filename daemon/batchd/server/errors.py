"""Refusals the API answers with ``{"error": code, "message": text}``: a 4xx status, or
503 while the daemon cannot save its state (nothing was changed)."""

from __future__ import annotations


class ApiError(Exception):
    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def bad_request(message: str) -> ApiError:
    return ApiError(400, "bad_request", message)


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def not_found(message: str) -> ApiError:
    return ApiError(404, "not_found", message)


def conflict(message: str) -> ApiError:
    return ApiError(409, "conflict", message)


def unavailable(message: str) -> ApiError:
    return ApiError(503, "unavailable", message)
