#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""libkjit exports kjit's own symbols only (runtime/kjit_exports.map): the C API (kjit_*) and the
kjit:: namespace with its type info and vtables; no spdlog, fmt or nlohmann instantiation, which
would bind to (or be bound by) another copy of those libraries in the same process.
usage: check_exports.py LIBKJIT.so"""
import re
import subprocess
import sys

OWN = re.compile(r"^(kjit_\w+|kjit::.*|(typeinfo|typeinfo name|vtable|VTT) for kjit::.*)$")
FOREIGN = re.compile(r"^(\S+ )?(spdlog|fmt|nlohmann)::")


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", library], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3:
            yield parts[2]


def main(library) -> int:
    symbols = list(exported(library))
    strangers = [s for s in symbols if not OWN.match(s)]
    foreign = [s for s in strangers if FOREIGN.match(s)]
    for symbol in strangers[:40]:
        print("exported:", symbol)
    c_api = [s for s in symbols if s.startswith("kjit_")]
    print(f"{len(symbols)} symbols exported, {len(c_api)} of the C API, {len(strangers)} not "
          f"kjit's, {len(foreign)} of spdlog/fmt/nlohmann")
    return 0 if symbols and c_api and not strangers and not foreign else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
