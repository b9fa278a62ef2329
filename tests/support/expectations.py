# SPDX-License-Identifier: Apache-2.0
"""Tallied checks for the tests' Python scripts (tests/bench, tests/sanitize): expect() counts a
check or prints and records its failure; summary() prints the tally and gives the exit status."""
failures = []
passed = 0


def expect(condition, what):
    global passed
    if condition:
        passed += 1
    else:
        failures.append(what)
        print(f"FAILED: {what}")


def summary(passed_label="passed"):
    """Prints 'N <passed_label>, M failed'; 1 if any check failed, else 0."""
    print(f"{passed} {passed_label}, {len(failures)} failed")
    return 1 if failures else 0
