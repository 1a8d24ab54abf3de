#!/usr/bin/env python3
"""Measures how much of PyTorch's C++ frontend test suite (test/cpp/api) ports to kiln by
aliases only. run.sh finds kiln and the compiler flags, then calls this script, which:

  1. splits each test file into one translation unit per TEST/TEST_F case (the file's preamble
     and helpers kept, the other cases blanked so that line numbers stay the file's own);
  2. skips the cases of categories that do not apply to kiln (NOT_APPLICABLE, with reasons);
  3. compiles every other case against a precompiled header, then links and runs those that
     compiled (each alone, so a crash costs one case);
  4. prints cases, compiled, passed and skipped per file and in total, and writes report.md
     with the missing names ranked by the number of cases they block.

The only source edits are the ones a porting user makes: <torch/...>, <ATen/...> and <c10/...>
includes become the alias header (force-included), PyTorch's two test support headers become
port_check's (include/port_check/test_support.h), `namespace torch {` (which an alias
cannot reopen) becomes `namespace kiln {`, and `torch::nn::` in string literals (the printed
names of modules) becomes `kiln::nn::`.
"""

import argparse
import collections
import concurrent.futures
import json
import pathlib
import re
import sys

import grouped  # beside this script
from grouped import check_case, compile_unit, link_unit, run
from not_applicable import NOT_APPLICABLE  # the categories and their reasons

# Includes the alias header stands for (a porting user replaces them by <kiln/kiln.h>).
LIBTORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](torch|ATen|c10|caffe2)/[^>"]*[>"]')
SUPPORT_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]test/cpp/(api|common)/support\.h[>"]')
NAMESPACE_OPEN = re.compile(r'^(\s*)namespace\s+(torch|at|c10)\b')
CASE_MACRO = re.compile(r'\b(TEST|TEST_F)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)')

# Compiler messages that name something kiln lacks: (regex, how to name it from the groups).
MISSING_PATTERNS = [
    (re.compile(r"error: '([^']+)' is not a member of '([^']+)'"),
     lambda g: f"{g[1]}::{g[0]}"),
    (re.compile(r"error: '([^']+)' in namespace '([^']+)' does not name a (?:template )?type"),
     lambda g: f"{g[1]}::{g[0]}"),
    (re.compile(r"error: '(?:(?:const|class|struct|union|enum) )*([^']+?)' has no member named "
                r"'([^']+)'"),
     lambda g: f"{g[0]}::{g[1]}"),
    (re.compile(r"error: '([^']+)' was not declared in this scope"), lambda g: g[0]),
    (re.compile(r"error: '([^']+)' has not been declared"), lambda g: g[0]),
    (re.compile(r"error: '([^']+)' is not a namespace-name"), lambda g: g[0]),
    (re.compile(r"error: '([^']+)' does not name a (?:template )?type"), lambda g: g[0]),
    # clang's wording
    (re.compile(r"error: no (?:type|member) named '([^']+)' in namespace '([^']+)'"),
     lambda g: f"{g[1]}::{g[0]}"),
    (re.compile(r"error: no member named '([^']+)' in '(?:(?:const|class|struct) )*([^']+)'"),
     lambda g: f"{g[1]}::{g[0]}"),
    (re.compile(r"error: use of undeclared identifier '([^']+)'"), lambda g: g[0]),
]
ERROR_LINE = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+):(?P<col>\d+): (?P<kind>error|fatal "
                        r"error): (?P<msg>.*)$")


def code_mask(text):
    """The text with comments and string/char literals replaced by spaces (newlines kept), so
    that braces and macro names are found only in code."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def split_cases(text):
    """[(suite, name, macro, start, end)] for each top-level TEST/TEST_F, offsets into text
    (end just past the case's closing brace)."""
    mask = code_mask(text)
    cases, depth, i = [], 0, 0
    while i < len(mask):
        c = mask[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and c == "T":
            m = CASE_MACRO.match(mask, i)
            if m and (i == 0 or not (mask[i - 1].isalnum() or mask[i - 1] == "_")):
                body = mask.find("{", m.end())
                level, j = 0, body
                while j < len(mask):
                    level += {"{": 1, "}": -1}.get(mask[j], 0)
                    if level == 0:
                        break
                    j += 1
                cases.append((m.group(2), m.group(3), m.group(1), i, j + 1))
                i = j + 1
                continue
        i += 1
    return cases


def not_applicable(file_name, case_id):
    """(category, reason) when the case does not apply to kiln, else None."""
    for category, what, pattern, reason in NOT_APPLICABLE:
        subject = file_name if what == "file" else case_id
        if re.search(pattern, subject):
            return category, reason
    return None


PRINTED_NAMESPACE = re.compile(r"\btorch::nn::")


def rename_printed_modules(text):
    """`torch::nn::` inside string literals (and comments) becomes `kiln::nn::`: kiln's modules
    print their own class names (docs/porting.md, "What differs"), so the renaming a port does
    reaches the expected strings too. Code outside literals keeps the alias."""
    mask = code_mask(text)
    out, pos = [], 0
    for m in PRINTED_NAMESPACE.finditer(text):
        if mask[m.start()] == " ":  # blanked by code_mask: in a literal or comment
            out.append(text[pos:m.start()])
            out.append("kiln::nn::")
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def port_source(text):
    """The edits a porting user makes (line count unchanged)."""
    text = rename_printed_modules(text)
    lines = []
    for line in text.split("\n"):
        if SUPPORT_INCLUDE.match(line) or LIBTORCH_INCLUDE.match(line):
            line = "// port_check: " + line.strip() + " (the alias header stands for it)"
        else:
            line = NAMESPACE_OPEN.sub(r"\1namespace kiln", line)
        lines.append(line)
    return "\n".join(lines)


IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
DEFINES_TYPE = re.compile(r"\b(?:struct|class|union|enum(?:\s+class)?)\s+(?:\w+\s+)*?(\w+)"
                          r"\s*(?:[:{;]|final\b|$)")


def without_parentheses(text):
    """text with every parenthesized group removed (default arguments hold '=')."""
    while True:
        shorter = re.sub(r"\([^()]*\)", "", text)
        if shorter == text:
            return text
        text = shorter


def top_level_chunks(mask, start, end):
    """[(start, end)] of the top-level declarations in mask[start:end]: a preprocessor line,
    a declaration ending with ';', or a definition ending with its closing brace (those inside
    a namespace block are chunks of their own)."""
    chunks, i = [], start
    while i < end:
        while i < end and mask[i].isspace():
            i += 1
        if i >= end:
            break
        j = i
        if mask[i] == "#":
            while j < end and mask[j] != "\n":
                j += 2 if mask[j] == "\\" else 1
            chunks.append((i, min(j, end)))
            i = j
            continue
        depth = 0
        while j < end:
            c = mask[j]
            if c in "{([":
                depth += 1
            elif c in "})]":
                depth -= 1
                if depth == 0 and c == "}":
                    head = without_parentheses(mask[i:mask.find("{", i)])
                    if not (DEFINES_TYPE.search(head) or "=" in head):
                        break
            elif c == ";" and depth == 0:
                break
            j += 1
        opening = re.match(r"(?:inline\s+)?namespace\b[^{;=]*\{", mask[i:j + 1])
        if opening:  # a namespace block: its declarations are chunks, the braces stay
            chunks += top_level_chunks(mask, i + opening.end(), j)
        else:
            chunks.append((i, min(j + 1, end)))
        i = j + 1
    return chunks


def defined_names(chunk):
    """The names a top-level declaration defines (empty: keep it whatever the case uses)."""
    macro_holder = re.match(r"TORCH_MODULE\w*\s*\(\s*(\w+)", chunk)  # declares a holder
    if macro_holder:
        return {macro_holder.group(1)}
    if chunk.startswith("#") or re.match(r"(using\s+namespace|namespace|extern)\b", chunk):
        return set()
    head = chunk
    for stop in ("{", "="):
        cut = head.find(stop)
        if cut >= 0 and "operator" not in head[:cut]:
            head = head[:cut]
    head = re.sub(r"^template\s*<(?:[^<>]|<[^<>]*>)*>\s*", "", head.strip())
    m = re.match(r"using\s+(\w+)\s*$", head.strip())
    if m:
        return {m.group(1)}
    m = DEFINES_TYPE.search(head)
    if m and "(" not in head[:m.start()]:
        return {m.group(1)}
    if "operator" in head:
        return set()
    paren = head.find("(")
    before = head[:paren] if paren >= 0 else head
    while re.search(r"<[^<>]*>", before):
        before = re.sub(r"<[^<>]*>", "", before)
    names = IDENTIFIER.findall(before)
    if not names:
        return set()
    # `void Outer::helper(` defines helper and needs Outer; `Tensor x;` defines x.
    qualified = re.findall(r"(\w+)\s*::\s*(?=\w+\s*$)", before)
    return {names[-1], *qualified}


def case_unit(text, cases, keep):
    """The file with every case but cases[keep] (an index, or a set of them) blanked, and the
    top-level helpers that those cases do not use (directly or through other kept helpers)
    blanked too; newlines kept, so compiler messages give the file's own line numbers."""
    keep = {keep} if isinstance(keep, int) else set(keep)
    mask = code_mask(text)
    regions, pos = [], 0
    for _, _, _, start, end in cases:
        regions.append((pos, start))
        pos = end
    regions.append((pos, len(text)))
    chunks = [c for a, b in regions for c in top_level_chunks(mask, a, b)]
    names = [defined_names(mask[a:b]) for a, b in chunks]
    wanted = set()
    for index in keep:
        wanted |= set(IDENTIFIER.findall(mask[cases[index][3]:cases[index][4]]))
    kept = [not n for n in names]
    for index, keep_it in enumerate(kept):
        if keep_it:
            wanted |= set(IDENTIFIER.findall(mask[chunks[index][0]:chunks[index][1]]))
    changed = True
    while changed:
        changed = False
        for index, n in enumerate(names):
            if not kept[index] and n & wanted:
                kept[index] = changed = True
                wanted |= set(IDENTIFIER.findall(mask[chunks[index][0]:chunks[index][1]]))
    blank = [(a, b) for (a, b), k in zip(chunks, kept) if not k]
    blank += [(start, end) for i, (_, _, _, start, end) in enumerate(cases) if i not in keep]
    out, pos = [], 0
    for start, end in sorted(blank):
        out.append(text[pos:start])
        out.append(re.sub(r"[^\n]", "", text[start:end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def test_files(api_dir):
    """The files of PyTorch's test_api target (from its CMakeLists.txt), else every *.cpp."""
    cmake = api_dir / "CMakeLists.txt"
    if cmake.exists():
        names = re.findall(r"\$\{TORCH_API_TEST_DIR\}/([\w\-]+\.cpp)", cmake.read_text())
        files = [api_dir / name for name in dict.fromkeys(names) if (api_dir / name).exists()]
        if files:
            return files
    return sorted(p for p in api_dir.glob("*.cpp") if "TEST" in p.read_text(errors="replace"))


NOT_A_TYPE = {"return", "else", "case", "throw", "new", "delete", "co_return", "sizeof", "goto"}


def declared_in(unit_text, name):
    """Whether the unit declares `name` itself (a variable or helper whose declaration failed
    on another missing name, so its own "not declared" errors are a consequence)."""
    unit_text = CASE_MACRO.sub("", unit_text)  # TEST_F(ModulesTest, Dropout2d) declares nothing
    pattern = (r"(?:(\w+)\s+|[>&*]\s*)" + re.escape(name) + r"\s*[=({;\[,)]|,\s*" +
               re.escape(name) + r"\s*[=;,]")
    for m in re.finditer(pattern, unit_text):
        if m.group(1) not in NOT_A_TYPE:
            return True
    return False


def missing_names(log, unit_text=""):
    """The names kiln lacks according to the compiler's messages, as kiln:: names; undeclared
    names that the unit itself declares are left out (they follow from another missing name)."""
    source = unit_text.split("\n")
    found_at = []  # (line, column, name)
    for line in log.splitlines():
        for pattern, name in MISSING_PATTERNS:
            m = pattern.search(line)
            if not m:
                continue
            found = re.sub(r"^(torch|at|c10)::", "kiln::", name(m.groups()))
            found = re.sub(r"^F::", "kiln::nn::functional::", found)  # the tests' alias
            found = found.replace("std::__cxx11::basic_string<char>", "std::string")
            found = found.replace("kiln::test::", "")
            local = "::" not in found and declared_in(unit_text, found)
            if not local and "TestBody()" not in found:
                where = ERROR_LINE.match(line)
                found_at.append((int(where.group("line")), int(where.group("col")), found)
                                if where else (0, 0, found))
            break
    # An unqualified name inside the arguments of an undeclared macro or function
    # (MAKE_TORCH_LIBRARY_IMPL(_test, CPU)) is that call's argument, not a name of its own.
    callees = {name for _, _, name in found_at if "::" not in name}
    names = []
    for line, column, name in found_at:
        text = source[line - 1][:max(column - 1, 0)] if 0 < line <= len(source) else ""
        inside_call = "::" not in name and any(
            m.group(1) in callees and text.count("(", m.start(1)) > text.count(")", m.start(1))
            for m in re.finditer(r"(\w+)\(", text))
        if not inside_call:
            names.append(name)
    return list(dict.fromkeys(names))


def first_error(log):
    for line in log.splitlines():
        m = ERROR_LINE.match(line)
        if m:
            return m.group("msg")
    return log.strip().splitlines()[-1] if log.strip() else "(no message)"


def error_shape(message):
    """A compiler message with its long quoted parts shortened, to group similar errors."""
    message = re.sub(r"'([^']{60})[^']+'", r"'\1...'", message)
    return re.sub(r"\(operand types? (are|is) .*\)", "", message)[:160]


def helper_error_lines(log, unit_path, case_start_line, case_end_line):
    """Lines of errors that lie in the file's shared preamble and helpers, not in the case."""
    lines = set()
    for line in log.splitlines():
        m = ERROR_LINE.match(line)
        if m and m.group("path").endswith(unit_path.name):
            number = int(m.group("line"))
            if not case_start_line <= number <= case_end_line:
                lines.add(number)
    return sorted(lines)


def plan(args):
    api_dir = pathlib.Path(args.api_dir)
    work = pathlib.Path(args.work)
    cases = []
    headers = work / "include" / "test" / "cpp" / "api"
    headers.mkdir(parents=True, exist_ok=True)
    for header in api_dir.glob("*.h"):  # the baselines and other headers the tests include
        if header.name != "support.h":
            (headers / header.name).write_text(port_source(header.read_text(errors="replace")))
    for path in test_files(api_dir):
        text = port_source(path.read_text(errors="replace"))
        found = split_cases(text)
        for index, (suite, name, macro, start, end) in enumerate(found):
            case_id = f"{suite}.{name}"
            case = {"file": path.name, "id": case_id, "compiled": False, "passed": False,
                    "start_line": text.count("\n", 0, start) + 1,
                    "end_line": text.count("\n", 0, end) + 1}
            skip = not_applicable(path.name, case_id)
            if skip:
                case["skipped"] = skip[0]
            else:
                unit = work / "units" / path.stem / f"{case_id}.cpp"
                unit.parent.mkdir(parents=True, exist_ok=True)
                unit.write_text(case_unit(text, found, index))
                case["unit"] = unit
                case["index"], case["source"] = index, (text, found)
            cases.append(case)
    return cases


def summarize(cases, args):
    files = collections.OrderedDict()
    for case in cases:
        files.setdefault(case["file"], []).append(case)
    rows = []
    for name, group in files.items():
        applicable = [c for c in group if "skipped" not in c]
        skipped = collections.Counter(c["skipped"] for c in group if "skipped" in c)
        rows.append((name, len(applicable), sum(c["compiled"] for c in applicable),
                     sum(c["passed"] for c in applicable),
                     ", ".join(f"{n} {k}" for k, n in skipped.most_common())))
    total = [sum(r[i] for r in rows) for i in (1, 2, 3)]
    skipped_total = collections.Counter(c["skipped"] for c in cases if "skipped" in c)

    blockers, alone = collections.Counter(), collections.Counter()
    blocked_cases = collections.defaultdict(list)
    others, helper_files = collections.Counter(), collections.Counter()
    for case in cases:
        if "skipped" in case or case["compiled"]:
            continue
        names = missing_names(case.get("syntax_log", ""), case["unit"].read_text())
        case["missing"] = names
        for name in names:
            blockers[name] += 1
            blocked_cases[name].append(case["id"])
        if len(names) == 1:
            alone[names[0]] += 1
        if not names:
            others[error_shape(first_error(case.get("syntax_log", "")))] += 1
        if helper_error_lines(case.get("syntax_log", ""), case["unit"], case["start_line"],
                              case["end_line"]):
            helper_files[case["file"]] += 1

    def pct(a, b):
        return f"{100.0 * a / b:.1f} %" if b else "-"

    out = ["file                      cases compiled  passed  skipped (not applicable)"]
    for name, applicable, compiled, passed, skipped in rows:
        out.append(f"{name:25} {applicable:5} {compiled:8} {passed:7}  {skipped}")
    out.append(f"{'total':25} {total[0]:5} {total[1]:8} {total[2]:7}  " +
               ", ".join(f"{n} {k}" for k, n in skipped_total.most_common()))
    out.append(f"compiled {pct(total[1], total[0])}, passed {pct(total[2], total[0])} "
               f"of {total[0]} applicable cases")
    print("\n".join(out))
    print("\nnot applicable:")
    reasons = {category: reason for category, _, _, reason in NOT_APPLICABLE}
    for category, count in skipped_total.most_common():
        print(f"  {category}: {count} ({reasons[category]})")
    print(f"\ntop missing names (cases blocked), full list in {args.work}/report.md:")
    for name, count in blockers.most_common(args.top):
        print(f"  {count:4}  {name}")

    report = [f"# port_check report\n\nTests: `{args.api_dir}`. kiln: `{args.kiln}`.\n",
              "## Per file\n", "```", *out, "```\n", "## Not applicable\n"]
    for category, count in skipped_total.most_common():
        report.append(f"- {category}: {count} cases. {reasons[category]}.")
    report += ["\n## Missing names, by cases blocked\n",
               "A case can need several names; 'alone' counts the cases that lack only this "
               "one.\n", "| cases | alone | name | some of the cases |", "|---:|---:|---|---|"]
    for name, count in blockers.most_common():
        some = ", ".join(blocked_cases[name][:3])
        report.append(f"| {count} | {alone[name]} | `{name}` | {some} |")
    report += ["\n## Cases that failed without a missing name (first error)\n",
               "| cases | first error |", "|---:|---|"]
    for message, count in others.most_common(60):
        report.append(f"| {count} | `{message.replace('|', '/')}` |")
    report += ["\n## Cases with errors in their file's shared helpers\n",
               "| file | cases |", "|---|---:|"]
    for name, count in helper_files.most_common():
        report.append(f"| {name} | {count} |")
    report += ["\n## Compiled but failed\n"]
    for case in cases:
        if case.get("compiled") and not case.get("passed"):
            lines = [line.strip() for line in case.get("run_log", "").splitlines()]
            first = next((i for i, line in enumerate(lines) if line.endswith("Failure")), None)
            detail = lines[first:first + 4] if first is not None else [l for l in lines if l][-3:]
            report.append(f"- {case['file']} {case['id']}: " + " / ".join(detail)[:400])
    pathlib.Path(args.work, "report.md").write_text("\n".join(report) + "\n")
    results = [{k: v for k, v in c.items() if k in ("file", "id", "skipped", "compiled",
                                                       "passed", "missing")} for c in cases]
    pathlib.Path(args.work, "results.json").write_text(json.dumps(results, indent=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("api_dir", help="PyTorch's test/cpp/api folder")
    parser.add_argument("--work", required=True, help="folder for units, logs and report.md")
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--cxxflags", required=True)
    parser.add_argument("--ldflags", required=True)
    parser.add_argument("--pch-header", required=True, help="force-included, precompiled")
    parser.add_argument("--main-object", required=True)
    parser.add_argument("--kiln", default="", help="which kiln (for the report)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--nice", type=int, default=10, help="niceness of the compiles")
    parser.add_argument("--files", nargs="*", help="only these test files (names)")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--per-case", action="store_true",
                        help="compile every case alone (slower; grouped.py says how the default "
                        "groups them)")
    parser.add_argument("--report-only", action="store_true",
                        help="summarize the last run's results.json and logs again")
    parser.add_argument("--compile-timeout", type=int, default=600)
    parser.add_argument("--run-timeout", type=int, default=120)
    args = parser.parse_args()

    cases = plan(args)
    todo = [c for c in cases if "unit" in c and not args.report_only and
            (not args.files or c["file"] in args.files)]
    # The other cases keep the last run's results (--files re-checks only some files).
    results = pathlib.Path(args.work, "results.json")
    last = {(r["file"], r["id"]): r for r in
            (json.loads(results.read_text()) if results.exists() else [])}
    kept = []
    for case in cases:
        old = last.get((case["file"], case["id"]))
        if "unit" in case and case not in todo:
            if old is None:
                continue
            case["compiled"], case["passed"] = old.get("compiled"), old.get("passed")
            log = case["unit"].with_suffix(".log")
            case["syntax_log" if not case["compiled"] else "run_log"] = (
                log.read_text() if log.exists() else "")
        elif "unit" not in case and old is None and args.files and case["file"] not in args.files:
            continue
        kept.append(case)
    cases = kept
    skipped = sum("skipped" in c for c in cases)
    print(f"port_check: {len(todo)} cases to check, {skipped} not applicable", file=sys.stderr)
    by_file = collections.OrderedDict()
    for case in todo:
        by_file.setdefault(case["file"], []).append(case)

    def check_file(file_cases):
        if args.per_case:
            return [check_case(case, args) for case in file_cases]
        text, found = file_cases[0]["source"]
        return grouped.check_file(
            file_cases, args, lambda group: case_unit(text, found, {c["index"] for c in group}),
            lambda unit, all_errors: compile_unit(unit, args, all_errors),
            lambda obj, exe: link_unit(obj, exe, args), run, check_case)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, alone in zip(by_file, pool.map(check_file, by_file.values())):
            cases_of = by_file[name]
            print(f"port_check: {name}: {sum(c['compiled'] for c in cases_of)} of "
                  f"{len(cases_of)} compiled, {sum(c['passed'] for c in cases_of)} passed "
                  f"({len(alone)} checked alone)", file=sys.stderr)
    summarize(cases, args)


if __name__ == "__main__":
    main()
