"""``python -m storage check [PATH]``: verify a database; exit 0 when the books balance, else 1."""

from __future__ import annotations

import argparse
import os
import sys

from storage.check import check_database


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m storage", description="Paiju storage tools")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="verify balances, ledger, grants and escrow (read-only)")
    check.add_argument(
        "path",
        nargs="?",
        default=os.environ.get("PAIJU_DB", "paiju.sqlite3"),
        help="the SQLite file (default: $PAIJU_DB or paiju.sqlite3)",
    )
    args = parser.parse_args(argv)
    report = check_database(args.path)
    print(report.render())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
