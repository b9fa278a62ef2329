#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compute-sanitizer racecheck logs, read for scripts/sanitize_gpu.sh.

  racecheck_hazards.py LOG [--sass FILE] [--producer N]

Prints the distinct hazards LOG shows (its kind, then the earlier access and the later one:
read or write, the thread's role, the kernel offset and, from FILE, nvdisasm -c or cuobjdump
-sass of the kernel's cubin, the instruction there), each with how many of the shown hazards it
covers, and its race analysis reports. With --producer (the producer thread's index: a ring's
consumer threads are those below it) the last line says whether every report shown is the
hand-off racecheck cannot follow:
  handoff: WAW WAR     (the kinds seen) when every hazard is between a consumer thread's
                       shared load or store (LDS, STS), the earlier, and the producer thread's
                       bulk copy (UBLKCP) of the same bytes, the later: a WAW or WAR where the
                       copy writes them, a RAW where it reads a consumer's store out; and every
                       analysis report pairs such instructions;
  handoff: none (why)  otherwise.
With --analysis (LOG from --racecheck-report analysis, which names instructions, not threads)
the last line says whether every race racecheck found is such a hand-off:
  races: handoff K reports, N hazards   when every report was shown and each pairs the bulk
                       copy's write (UBLKCP) with shared loads and stores (LDS, STS) only;
  races: none (why)    otherwise.
Exit status 0, or 2 for a missing file or bad arguments.
"""
import argparse
import re
import sys

ACCESS = re.compile(r"^=+\s+(Read|Write) Thread \((\d+),(\d+),(\d+)\) at (.*?)\+0x([0-9a-fA-F]+)(?: in \S+)?\s*$")
HAZARD = re.compile(r"^=+\s+\w+: Potential (RAW|WAR|WAW) hazard detected at (\S+) (0x[0-9a-fA-F]+)")
RACE_FIRST = re.compile(r"^=+\s+\w+: Race reported between (Read|Write) access at (.*?)\+0x([0-9a-fA-F]+)")
RACE_MORE = re.compile(r"^=+\s+and (Read|Write) access at (.*?)\+0x([0-9a-fA-F]+).*?(?:\[(\d+) hazards?\])?\s*$")
SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
SASS_FUNCTION = re.compile(r"^(?:\.text\.(\S+):|\s*Function : (\S+))")
SASS_LINE = re.compile(r"/\*([0-9a-fA-F]{4,})\*/\s+([^;]*?)\s*;")


def read_sass(path):
    """{function (mangled): {offset: instruction}} from nvdisasm -c or cuobjdump -sass."""
    functions, current = {}, None
    with open(path, errors="replace") as text:
        for line in text:
            if m := SASS_FUNCTION.match(line):
                current = functions.setdefault(m.group(1) or m.group(2), {})
            elif current is not None and (m := SASS_LINE.search(line)):
                current.setdefault(int(m.group(1), 16), m.group(2))
    return functions


def kernel_identifier(name):
    """The last name component of a kernel as racecheck prints it: 'void kjit::ring<...>(...)' -> 'ring'."""
    name = name.replace("(anonymous namespace)::", "").replace("<unnamed>::", "")
    name = re.sub(r"^void ", "", name.strip())
    name = re.split(r"[<(]", name, maxsplit=1)[0]
    return name.split("::")[-1]


class Sass:
    def __init__(self, functions):
        self.functions = functions

    def instruction(self, kernel, offset):
        if not self.functions:
            return "?"
        if len(self.functions) == 1:
            code = next(iter(self.functions.values()))
        else:
            ident = kernel_identifier(kernel)
            matches = [f for f in self.functions if f == ident or f"{len(ident)}{ident}" in f]
            if len(matches) != 1:
                return "?"
            code = self.functions[matches[0]]
        return code.get(offset, "?")


def opcode(instruction):
    """'@!P0 STS.128 [R0], R4' -> 'STS'."""
    words = [w for w in instruction.split() if not w.startswith("@")]
    return words[0].split(".")[0] if words else "?"


def parse(path):
    """(hazards, races, summary): hazards as (kind, first, second), each access (rw, (x, y, z),
    kernel, offset); races as [(rw, kernel, offset, hazards)]; summary (shown, errors, warnings) or None."""
    hazards, races, summary = [], [], None
    kind, accesses, race = None, [], None
    with open(path, errors="replace") as text:
        for line in text:
            if m := HAZARD.match(line):
                kind, accesses = m.group(1), []
                continue
            if kind and (m := ACCESS.match(line)):
                accesses.append((m.group(1), tuple(int(m.group(i)) for i in (2, 3, 4)), m.group(5).strip(),
                                 int(m.group(6), 16)))
                if len(accesses) == 2:
                    hazards.append((kind, accesses[0], accesses[1]))
                    kind = None
                continue
            if m := RACE_FIRST.match(line):
                race = [(m.group(1), m.group(2).strip(), int(m.group(3), 16), None)]
                races.append(race)
                continue
            if race is not None and (m := RACE_MORE.match(line)):
                race.append((m.group(1), m.group(2).strip(), int(m.group(3), 16),
                             int(m.group(4)) if m.group(4) else None))
                continue
            race = None
            if m := SUMMARY.search(line):
                summary = tuple(int(m.group(i)) for i in (1, 2, 3))
    return hazards, races, summary


def role(thread, producer):
    x, y, z = thread
    if producer is None or y or z:
        return "thread"
    if x == producer:
        return "producer"
    return "consumer" if x < producer else "thread"


def thread_list(xs):
    """[1, 2, 3, 7] -> '1-3, 7'."""
    xs, spans = sorted(set(xs)), []
    for x in xs:
        if spans and x == spans[-1][1] + 1:
            spans[-1][1] = x
        else:
            spans.append([x, x])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


def handoff_fault(kind, first_role, second_role, first_op, second_op):
    """Why one hazard is not the hand-off racecheck cannot follow, or None when it is: a consumer's
    shared load or store, then the producer's bulk copy writing those bytes (WAW, WAR) or, after a
    consumer's store, reading them out (RAW)."""
    if kind not in ("WAW", "WAR", "RAW"):
        return f"a {kind} hazard"
    if first_role != "consumer" or first_op not in ("LDS", "STS"):
        return f"a {kind} whose earlier access is {first_op} by a {first_role} thread"
    if second_role != "producer" or second_op != "UBLKCP":
        return f"a {kind} whose later access is {second_op} by a {second_role} thread"
    return None


def race_fault(race, sass):
    """Why a race analysis report is not the hand-off, or None: it must pair the producer's bulk
    copy writing (UBLKCP) with shared loads and stores only."""
    ops = [(rw, opcode(sass.instruction(kernel, off))) for rw, kernel, off, _ in race]
    if any(op == "UBLKCP" and rw == "Write" for rw, op in ops) and all(op in ("UBLKCP", "LDS", "STS") for _, op in ops):
        return None
    return "a race report pairing " + ", ".join(f"{rw} {op}" for rw, op in ops)


def verdict(faults, good):
    if not faults:
        return good
    return f"none ({faults[0]}" + (f", and {len(faults) - 1} more" if len(faults) > 1 else "") + ")"


def report(path, sass, producer, analysis=False):
    hazards, races, summary = parse(path)
    lines, groups, faults, kinds = [], {}, [], set()
    for kind, first, second in hazards:
        roles = (role(first[1], producer), role(second[1], producer))
        instrs = (sass.instruction(first[2], first[3]), sass.instruction(second[2], second[3]))
        key = (kind, first[0], roles[0], first[2], first[3], instrs[0], second[0], roles[1], second[3], instrs[1])
        groups.setdefault(key, []).append((first[1][0], second[1][0]))
        fault = handoff_fault(kind, *roles, opcode(instrs[0]), opcode(instrs[1]))
        faults += [fault] if fault else []
        kinds |= set() if fault else {kind}
    shown = f"{summary[0]} shown of {summary[1]} errors, {summary[2]} warnings" if summary else "no summary line"
    lines.append(f"{len(hazards)} hazard reports, {len(races)} race analysis reports ({shown})")
    kernels = {k[3] for k in groups}
    for key, threads in groups.items():
        kind, rw1, role1, _, off1, ins1, rw2, role2, off2, ins2 = key
        lanes = sorted({a % 32 for a, _ in threads})
        lane_words = f"{'lanes' if len(lanes) > 1 else 'lane'} {thread_list(lanes)}"
        lines.append(f"{kind} x{len(threads)}: {rw1} by {role1} thread {thread_list(a for a, _ in threads)} "
                     f"({lane_words}) at +{off1:#x} {ins1}; then {rw2} by {role2} thread "
                     f"{thread_list(b for _, b in threads)} at +{off2:#x} {ins2}")
    for race in races:
        lines.append("race: " + "; and ".join(
            f"{rw} at +{off:#x} {sass.instruction(kernel, off)}" + (f" [{n} hazards]" if n else "")
            for rw, kernel, off, n in race))
        fault = race_fault(race, sass)
        faults += [fault] if fault else []
        kernels |= {kernel for _, kernel, _, _ in race}
    lines.extend(f"in {k}" for k in sorted(kernels))
    if summary is None:
        faults.append("no racecheck summary")
    if analysis:
        if not races:
            faults.append("no race report shown")
        if summary and summary[0] != summary[1] + summary[2]:
            faults.append(f"{summary[0]} of {summary[1] + summary[2]} reports shown")
        count = sum(n or 0 for race in races for *_, n in race)
        lines.append("races: " + verdict(faults, f"handoff {len(races)} reports, {count} hazards"))
    elif producer is not None:
        if not hazards:
            faults.append("no hazard report shown")
        lines.append("handoff: " + verdict(faults, " ".join(sorted(kinds, reverse=True))))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log")
    parser.add_argument("--sass", help="nvdisasm -c or cuobjdump -sass of the kernel's cubin")
    parser.add_argument("--producer", type=int, help="the producer thread's index")
    parser.add_argument("--analysis", action="store_true",
                        help="LOG holds race analysis reports only (--racecheck-report analysis)")
    args = parser.parse_args()
    try:
        sass = Sass(read_sass(args.sass) if args.sass else {})
        lines = report(args.log, sass, args.producer, args.analysis)
    except OSError as error:
        print(f"racecheck_hazards.py: {error}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
