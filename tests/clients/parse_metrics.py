"""Parses a metrics exposition read from stdin with the reference Python parser.

Usage: python3 parse_metrics.py prometheus|openmetrics < body

Prints one line per family: name, type, number of samples. Exits 1 when the
body does not parse, and 77 when prometheus_client is not installed, so the
caller can tell a broken exposition from a missing tool.
"""

import sys

try:
    from prometheus_client.openmetrics.parser import (
        text_string_to_metric_families as parse_openmetrics,
    )
    from prometheus_client.parser import (
        text_string_to_metric_families as parse_prometheus,
    )
except ImportError as error:
    print(f"prometheus_client is not installed: {error}", file=sys.stderr)
    sys.exit(77)

PARSERS = {"prometheus": parse_prometheus, "openmetrics": parse_openmetrics}


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] not in PARSERS:
        print(f"usage: {sys.argv[0]} {'|'.join(PARSERS)} < body", file=sys.stderr)
        return 2
    body = sys.stdin.read()
    try:
        # The parsers are generators: errors surface while iterating.
        families = list(PARSERS[sys.argv[1]](body))
    except Exception as error:  # noqa: BLE001 - any parse failure is the answer
        print(f"parse error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    for family in families:
        print(family.name, family.type, len(family.samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
