"""``python -m torchferro.report DIR [-o OUT.html] [--no-graphviz]``: writes one HTML page from the
traces that ``TORCHFERRO_TRACE_DIR=DIR`` left there, and prints its path."""

from __future__ import annotations

import argparse
import os
import sys

from . import write_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m torchferro.report", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "trace_dir",
        help="the TORCHFERRO_TRACE_DIR directory (or one .jsonl trace file)",
    )
    parser.add_argument(
        "-o",
        "--output",
        help="where to write the page (default: TRACE_DIR/torchferro_report.html)",
    )
    parser.add_argument(
        "--no-graphviz",
        action="store_true",
        help="show graphs as DOT text instead of drawing them",
    )
    args = parser.parse_args(argv)
    if not os.path.exists(args.trace_dir):
        print(
            f"torchferro.report: {args.trace_dir}: no such file or directory",
            file=sys.stderr,
        )
        return 2
    out = write_report(
        args.trace_dir, args.output, dot_path=None if args.no_graphviz else "auto"
    )
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
