#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/racecheck_hazards.py without a GPU: racecheck logs written here in the tool's formats
(hazard and race analysis reports) against SASS listings in nvdisasm's and cuobjdump's formats.
Only a consumer's shared load or store followed by the producer's bulk copy of the same bytes is a
hand-off; any other hazard, thread, instruction or order, an unknown instruction or a log without
its summary makes the verdict none. Exits non-zero naming each failed check."""
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
HELPER = ROOT / "scripts" / "racecheck_hazards.py"
sys.path.insert(0, str(ROOT / "tests" / "support"))

import expectations  # noqa: E402
from expectations import expect  # noqa: E402
RING = "void kjit::ring<(int)0, kjit::Io<float, float, (bool)0>, (int)1024, (int)512, (int)256, (int)1>(kjit::RowParams)"
RING_SASS = """\t.section\t.text._ZN4kjit4ringILi0ENS_2IoIffLb0EEELi1024ELi512ELi256ELi1EEEvNS_9RowParamsE,"ax",@progbits
.text._ZN4kjit4ringILi0ENS_2IoIffLb0EEELi1024ELi512ELi256ELi1EEEvNS_9RowParamsE:
        /*2770*/                   LDS.128 R4, [R5] ;
        /*37c0*/                   STS.128 [R0], R4 ;
        /*4000*/              @!P0 STS.128 [R2], R8 ;
        /*6100*/                   UBLKCP.S.G [UR8], [UR6], UR5 ;
        /*6200*/                   UBLKCP.G.S [UR4], [UR6], UR8 ;
"""
# cuobjdump -sass's format, two kernels (the probe's).
PROBE_SASS = """\t\tFunction : _ZN47_GLOBAL__N__0b0a08db_18_racecheck_probe_cu_main18handoff_by_threadsEPK5uint4PS0_i
        /*0960*/                   LDS.128 R4, [R8] ;                           /* 0x000 */
        /*06f0*/                   STS.128 [R8], R4 ;                           /* 0x000 */
\t\tFunction : _ZN47_GLOBAL__N__0b0a08db_18_racecheck_probe_cu_main16handoff_by_warpsEPK5uint4PS0_i
        /*06f0*/                   UBLKCP.S.G [UR6], [UR4], UR8 ;               /* 0x000 */
        /*0a60*/                   STS.128 [R8], R4 ;                           /* 0x000 */
"""
PROBE = "(anonymous namespace)::handoff_by_warps(const uint4 *, uint4 *, int)"


def hazard(kind, first, second, kernel=RING, address=0x890):
    """One hazard report; first and second are (Read|Write, thread x, offset)."""
    lines = [f"========= Error: Potential {kind} hazard detected at __shared__ {address:#x} in block (2,0,0) :"]
    for rw, x, offset in (first, second):
        lines.append(f"=========     {rw} Thread ({x},0,0) at {kernel}+{offset:#x}")
    lines += ["=========     Current Value : 43, Incoming Value : ?",
              "=========     Saved host backtrace up to driver entry point at kernel launch time",
              "=========         Host Frame: cuLaunchKernelEx [0x39fc2f] in libcuda.so.1", "========= "]
    return "\n".join(lines)


def log(*reports, errors=None, summary=True):
    text = ["========= COMPUTE-SANITIZER", "case: softmax f32 1716x1024, ring"] + list(reports) + ["case: ok"]
    if summary:
        shown = sum(r.count("hazard detected") for r in reports)
        text.append(f"========= RACECHECK SUMMARY: {shown} hazards displayed ({errors or shown} errors, 0 warnings)")
    return "\n".join(text) + "\n"


def run(workdir, text, sass=RING_SASS, producer=512, analysis=False):
    path = pathlib.Path(workdir)
    (path / "race.log").write_text(text)
    args = [sys.executable, str(HELPER), str(path / "race.log")]
    if sass is not None:
        (path / "k.sass").write_text(sass)
        args += ["--sass", str(path / "k.sass")]
    if producer is not None:
        args += ["--producer", str(producer)]
    if analysis:
        args.append("--analysis")
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    expect(out.returncode == 0, f"exit status 0 (got {out.returncode}: {out.stderr.strip()})")
    return out.stdout.splitlines()


def verdict(lines):
    return lines[-1] if lines else ""


WAW = lambda x=1, addr=0x890: hazard("WAW", ("Write", x, 0x37c0), ("Write", 512, 0x6100), address=addr)  # noqa: E731
WAR = lambda x=2: hazard("WAR", ("Read", x, 0x2770), ("Write", 512, 0x6100))  # noqa: E731


def check_handoffs(workdir):
    lines = run(workdir, log(WAW(1), WAW(1, 0x891), WAW(2), errors=642817))
    expect(verdict(lines) == "handoff: WAW", f"WAW hand-offs: {verdict(lines)}")
    expect(any("3 shown of 642817 errors" in line for line in lines), "shown and counted hazards")
    group = [line for line in lines if line.startswith("WAW x3")]
    expect(len(group) == 1, "three hazards of one pair of accesses are one line")
    expect(group and "consumer thread 1-2 (lanes 1-2) at +0x37c0 STS.128 [R0], R4" in group[0]
           and "producer thread 512 at +0x6100 UBLKCP.S.G [UR8], [UR6], UR5" in group[0],
           f"the line names both threads and instructions: {group}")
    expect(any(line == f"in {RING}" for line in lines), "the kernel is named")
    lines = run(workdir, log(WAR(2)))
    expect(verdict(lines) == "handoff: WAR", f"WAR hand-off: {verdict(lines)}")
    lines = run(workdir, log(WAW(), WAR()))
    expect(verdict(lines) == "handoff: WAW WAR", f"both kinds: {verdict(lines)}")
    raw = hazard("RAW", ("Write", 5, 0x37c0), ("Read", 512, 0x6200))
    expect(verdict(run(workdir, log(raw))) == "handoff: RAW", "a consumer's store read out by the bulk store")
    lines = run(workdir, log(WAW()), producer=None)
    expect(not any(line.startswith("handoff:") for line in lines), "no verdict without --producer")


def check_not_handoffs(workdir):
    cases = {
        "two consumers": hazard("WAW", ("Write", 1, 0x37c0), ("Write", 40, 0x4000)),
        "the producer first": hazard("RAW", ("Write", 512, 0x6100), ("Read", 3, 0x2770)),
        "a thread above the producer": hazard("WAW", ("Write", 513, 0x37c0), ("Write", 512, 0x6100)),
        "a producer store, not a bulk copy": hazard("WAW", ("Write", 1, 0x37c0), ("Write", 512, 0x4000)),
        "an offset with no instruction": hazard("WAW", ("Write", 1, 0x37c4), ("Write", 512, 0x6100)),
    }
    for name, report in cases.items():
        lines = run(workdir, log(WAW(), report))
        expect(verdict(lines).startswith("handoff: none ("), f"{name}: {verdict(lines)}")
    expect(verdict(run(workdir, log(WAW()), sass=None)).startswith("handoff: none"), "no SASS: no verdict")
    expect(verdict(run(workdir, log(WAW(), summary=False))) == "handoff: none (no racecheck summary)",
           "a log cut off before its summary")
    expect(verdict(run(workdir, log())) == "handoff: none (no hazard report shown)", "nothing shown")


def check_race_reports(workdir):
    race = (f"========= Error: Race reported between Write access at {RING}+0x37c0\n"
            f"=========     and Write access at {RING}+0x6100 [642816 hazards]\n")
    lines = run(workdir, log(WAW(), race))
    expect(verdict(lines) == "handoff: WAW", f"a hand-off race report: {verdict(lines)}")
    expect(any(line.startswith("race: Write at +0x37c0 STS.128") and "[642816 hazards]" in line for line in lines),
           f"the race report listed: {lines}")
    other = (f"========= Error: Race reported between Write access at {RING}+0x37c0\n"
             f"=========     and Read access at {RING}+0x2770 [4 hazards]\n")
    expect(verdict(run(workdir, log(WAW(), other))).startswith("handoff: none (a race report pairing"),
           "a race report between consumer accesses")


def analysis_log(*races, shown=None, errors=None):
    """A log of --racecheck-report analysis: race reports only, each counted as one error."""
    text = ["========= COMPUTE-SANITIZER"]
    for first, *more in races:
        text.append(f"========= Error: Race reported between {first[0]} access at {RING}+{first[1]:#x}")
        text += [f"=========     and {rw} access at {RING}+{offset:#x} [{n} hazards]" for rw, offset, n in more]
    shown = len(races) if shown is None else shown
    text.append(f"========= RACECHECK SUMMARY: {shown} hazards displayed ({errors or len(races)} errors, 0 warnings)")
    return "\n".join(text) + "\n"


def check_analysis(workdir):
    handoff = (("Write", 0x37c0), ("Write", 0x6100, 642816))
    lines = run(workdir, analysis_log(handoff), analysis=True)
    expect(verdict(lines) == "races: handoff 1 reports, 642816 hazards", f"every race a hand-off: {lines}")
    read_too = (("Write", 0x6100), ("Read", 0x2770, 8), ("Write", 0x37c0, 24))
    expect(verdict(run(workdir, analysis_log(handoff, read_too), analysis=True)) ==
           "races: handoff 2 reports, 642848 hazards", "a race with reads and writes of the chunk")
    between_consumers = (("Write", 0x37c0), ("Read", 0x2770, 4))
    expect(verdict(run(workdir, analysis_log(handoff, between_consumers), analysis=True)).startswith(
        "races: none (a race report pairing Write STS, Read LDS"), "a race between consumer accesses")
    expect(verdict(run(workdir, analysis_log(handoff, shown=1, errors=3), analysis=True)) ==
           "races: none (1 of 3 reports shown)", "reports left unshown")
    expect(verdict(run(workdir, analysis_log(), analysis=True)).startswith("races: none (no race report shown"),
           "no race report")


def check_two_kernels(workdir):
    report = hazard("WAW", ("Write", 1, 0xa60), ("Write", 64, 0x6f0), kernel=PROBE, address=0x10)
    lines = run(workdir, log(report), sass=PROBE_SASS, producer=64)
    expect(verdict(lines) == "handoff: WAW", f"the kernel's own instructions in a two-kernel listing: {lines}")
    # racecheck on the H100 names the anonymous namespace "<unnamed>".
    unnamed = hazard("WAW", ("Write", 1, 0xa60), ("Write", 64, 0x6f0), kernel=PROBE.replace("(anonymous namespace)",
                                                                                             "<unnamed>"), address=0x10)
    lines = run(workdir, log(unnamed), sass=PROBE_SASS, producer=64)
    expect(verdict(lines) == "handoff: WAW", f"a kernel in <unnamed>:: found in the listing: {lines}")


def main():
    with tempfile.TemporaryDirectory() as workdir:
        check_handoffs(workdir)
        check_not_handoffs(workdir)
        check_race_reports(workdir)
        check_analysis(workdir)
        check_two_kernels(workdir)
    return expectations.summary("checks passed")


if __name__ == "__main__":
    sys.exit(main())
