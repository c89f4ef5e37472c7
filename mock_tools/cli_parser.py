"""``OneLineParser``: ``argparse`` whose usage errors are one line and a hint.

argparse prints the whole usage before a bad option's error; the command lines of the project
(``python -m mock_tools``, ``sandbox``) print the error in one line and where the usage is
instead, and exit 2 as argparse does. Sub-commands' parsers are made of the same class.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["OneLineParser"]


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message}\n  see: {self.prog} --help\n")
