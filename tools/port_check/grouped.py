"""Compiling, linking and running cases: one by one (check_case), or grouped by file
(check_file, the default), as PyTorch builds them, so that the precompiled header is loaded once
per file rather than once per case (most of a case's compile time). A grouped case's result is
the one it has alone:

  1. the file's cases (and the helpers they use) are one unit, compiled with every error shown;
  2. each error is laid to the case whose lines it is in, or whose line a template's "required
     from here" names; those cases did not compile (their log is their share of the messages),
     and the unit is compiled again without them, until it compiles;
  3. the unit that compiles is linked once and each of its cases is run alone (--gtest_filter),
     in its own process, and passes when gtest ran that one test and it passed;
  4. when an error lies outside every case (in a helper), the cases left are split in two
     groups, each with only the helpers its cases use; a group of fewer than 4 cases, or one
     that still fails after MAX_ROUNDS, is checked case by case (check_case).
"""

import os
import pathlib
import re
import subprocess

UNIT_LINE = r"^(?:In file included from )?{path}:(\d+):"
RAN_ONE = re.compile(r"^\[  PASSED  \] 1 test\.$", re.M)
MAX_ROUNDS = 4


def run(command, timeout, cwd=None):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                              env=dict(os.environ, LC_ALL="C"), errors="replace")
        return done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout} s"


def compile_unit(unit, args, all_errors=False):
    """(exit code, messages) of compiling unit to unit.o against the precompiled header."""
    # The tests' own headers, ported (plan() writes them), come before the originals.
    cxx = args.cxx.split() + ["-I" + str(pathlib.Path(args.work, "include"))]
    cxx += [f for f in args.cxxflags.split() if not (all_errors and f.startswith("-fmax-errors"))]
    return run(["nice", "-n", str(args.nice)] + cxx + [
        "-c", "-include", args.pch_header, str(unit), "-o", str(unit.with_suffix(".o"))],
        args.compile_timeout)


def link_unit(obj, exe, args):
    """(exit code, messages) of linking obj with the gtest main into exe (obj removed)."""
    done = run(["nice", "-n", str(args.nice)] + args.cxx.split() +
               [str(obj), args.main_object, "-o", str(exe)] + args.ldflags.split(),
               args.compile_timeout)
    obj.unlink(missing_ok=True)
    return done


def check_case(case, args):
    """Compiles one case alone; when it compiles, links and runs it. Fills the case."""
    obj = case["unit"].with_suffix(".o")
    exe = case["unit"].with_suffix(".exe")
    code, log = compile_unit(case["unit"], args)
    if code == 0:
        code, log = link_unit(obj, exe, args)
    case["compiled"] = code == 0
    if code != 0:
        case["syntax_log"] = log
        case["unit"].with_suffix(".log").write_text(log)
        obj.unlink(missing_ok=True)
        return case
    code, log = run([str(exe)], args.run_timeout)
    case["passed"] = code == 0
    case["run_log"] = log[-4000:]
    case["unit"].with_suffix(".log").write_text(log)
    for path in (obj, exe):
        path.unlink(missing_ok=True)
    return case


def lay_errors(log, unit_name, cases):
    """({case id: its messages}, whether some error lay in no case) for a unit's compile log."""
    at = re.compile(UNIT_LINE.format(path=r"\S*" + re.escape(unit_name)))

    def case_at(line_number):
        for case in cases:
            if case["start_line"] <= line_number <= case["end_line"]:
                return case["id"]
        return None

    messages, outside = {}, False
    block, named = [], None  # the lines since the last error, and the case they named last
    for line in log.splitlines():
        block.append(line)
        m = at.match(line)
        if m:
            named = case_at(int(m.group(1))) or named
        if ": error: " in line or ": fatal error: " in line:
            here = case_at(int(m.group(1))) if m else named
            if here is None:
                outside = True
            else:
                messages.setdefault(here, []).extend(block)
            block, named = [], None
    return {k: "\n".join(v) + "\n" for k, v in messages.items()}, outside


def check_file(file_cases, args, unit_text, compile_unit, link_unit, run, check_case, name="g"):
    """Checks the cases of one file (dicts with id, unit, start_line, end_line), grouped; returns
    the ones checked alone. unit_text(cases) is the file with only those cases and the helpers
    they use."""
    remaining = list(file_cases)
    directory = file_cases[0]["unit"].parent
    for attempt in range(MAX_ROUNDS):
        if len(remaining) < 2:
            break
        unit = directory / f"_grouped_{name}{attempt}.cpp"
        unit.write_text(unit_text(remaining))
        code, log = compile_unit(unit, all_errors=True)
        if code == 0:
            exe = unit.with_suffix(".exe")
            code, log = link_unit(unit.with_suffix(".o"), exe)
            if code != 0:
                break  # a link error names no case: one by one
            for case in remaining:
                case["compiled"] = True
                code, out = run([str(exe), f"--gtest_filter={case['id']}"], args.run_timeout)
                case["passed"] = code == 0 and bool(RAN_ONE.search(out))
                case["run_log"] = out[-4000:]
                case["unit"].with_suffix(".log").write_text(out)
            exe.unlink(missing_ok=True)
            return []
        failed, outside = lay_errors(log, unit.name, remaining)
        for case in remaining:
            if case["id"] in failed:
                case["compiled"] = False
                case["syntax_log"] = failed[case["id"]]
                case["unit"].with_suffix(".log").write_text(
                    f"(errors of this case in its file's grouped compile, {unit.name})\n" +
                    case["syntax_log"])
        remaining = [c for c in remaining if c["id"] not in failed]
        if outside and len(remaining) >= 4:  # a helper fails: halves, each with its own helpers
            half = len(remaining) // 2
            return [alone for part, tag in ((remaining[:half], "a"), (remaining[half:], "b"))
                    for alone in check_file(part, args, unit_text, compile_unit, link_unit, run,
                                            check_case, name + tag)]
        if outside or not failed:
            break
    for case in remaining:
        check_case(case, args)
    return remaining
