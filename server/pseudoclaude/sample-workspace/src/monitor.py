"""Report greenhouses whose average temperature is out of range."""

import csv
import sys
from collections import defaultdict

from thresholds import HIGH, LOW


def averages(path: str) -> dict[str, float]:
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            sums[row["greenhouse"]] += float(row["celsius"])
            counts[row["greenhouse"]] += 1
    return {name: sums[name] / counts[name] for name in sums}


if __name__ == "__main__":
    for name, value in sorted(averages(sys.argv[1]).items()):
        flag = "" if LOW <= value <= HIGH else "  <-- out of range"
        print(f"{name}: {value:.1f} C{flag}")
