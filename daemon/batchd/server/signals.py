"""The signals qsig may send, by name and number, and the pattern the API takes."""

from __future__ import annotations

# Signal numbers as Linux numbers them (the emulated job runs nowhere: this is the table
# PBS's qsig would use on a Linux server).
SIGNALS = {
    "NULL": 0, "HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "BUS": 7,
    "FPE": 8, "KILL": 9, "USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14,
    "TERM": 15, "STKFLT": 16, "CHLD": 17, "CONT": 18, "STOP": 19, "TSTP": 20, "TTIN": 21,
    "TTOU": 22, "URG": 23, "XCPU": 24, "XFSZ": 25, "VTALRM": 26, "PROF": 27, "WINCH": 28,
    "IO": 29, "PWR": 30, "SYS": 31,
}  # fmt: skip
BY_NUMBER = {n: name for name, n in SIGNALS.items()}
ENDING = ("KILL", "TERM")  # what ends an emulated job
SUSPENDING = ("suspend", "resume", "admin-suspend", "admin-resume")
# A name with or without SIG, a number 0-31, or one of PBS's suspend words.
SIGNAL_PATTERN = (
    "^(?:(?:SIG)?(?:" + "|".join(SIGNALS) + ")|[0-9]|[12][0-9]|3[01]|" + "|".join(SUSPENDING) + ")$"
)
