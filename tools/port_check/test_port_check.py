#!/usr/bin/env python3
"""Tests of port_check on fixture/ (a PyTorch-style test tree of our own):

    python3 tools/port_check/test_port_check.py [kiln-build-dir]

Without a build dir only the splitting and the reading of compiler messages are tested; with
one, run.sh also compiles and runs the fixture's cases against that build (ctest passes it).
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import port_check  # noqa: E402

API = HERE / "fixture" / "test" / "cpp" / "api"
BUILD_DIR = None


def sample():
    text = port_check.port_source((API / "sample.cpp").read_text())
    return text, port_check.split_cases(text)


def unit_of(case_id):
    text, cases = sample()
    index = [f"{suite}.{name}" for suite, name, *_ in cases].index(case_id)
    return port_check.case_unit(text, cases, index)


class Splitting(unittest.TestCase):
    def test_one_case_per_test_macro_outside_comments(self):
        _, cases = sample()
        self.assertEqual([f"{suite}.{name}" for suite, name, *_ in cases],
                         ["SampleTest.PassesWithAliases", "SampleOther.FailsWhenRun",
                          "SampleOther.UsesMissingHelper", "SampleOther.MissingMember",
                          "SampleOther.ComplexValues", "SampleOther.Runs_CUDA"])
        self.assertEqual(cases[0][2], "TEST_F")

    def test_unit_keeps_line_numbers_and_only_the_helpers_it_uses(self):
        original = (API / "sample.cpp").read_text()
        unit = unit_of("SampleTest.PassesWithAliases")
        self.assertEqual(unit.count("\n"), original.count("\n"))
        self.assertIn("torch::Tensor twice(", unit)
        self.assertNotIn("needs_missing", unit)
        self.assertIn("struct SampleTest", unit)
        self.assertNotIn("FailsWhenRun", unit)
        other = unit_of("SampleOther.UsesMissingHelper")
        self.assertIn("void needs_missing()", other)
        self.assertNotIn("twice(", other)
        self.assertNotIn("struct SampleTest", other)

    def test_porting_edits(self):
        text, _ = sample()
        self.assertIn("namespace kiln {", text)
        self.assertNotIn("namespace torch {", text)
        self.assertIn("// port_check: #include <torch/torch.h>", text)
        self.assertIn("// port_check: #include <test/cpp/api/support.h>", text)
        self.assertIn("#include <string>", text)

    def test_printed_module_names_are_renamed_in_literals_only(self):
        text = port_check.port_source(
            'torch::nn::Linear l(1, 2); // torch::nn::Linear\n'
            'ASSERT_EQ(c10::str(l), "torch::nn::Linear(in_features=1)");\n'
            'auto s = R"(torch::nn::Sequential(\n  (0): torch::nn::ReLU()\n))";\n')
        self.assertEqual(text,
                         'torch::nn::Linear l(1, 2); // kiln::nn::Linear\n'
                         'ASSERT_EQ(c10::str(l), "kiln::nn::Linear(in_features=1)");\n'
                         'auto s = R"(kiln::nn::Sequential(\n  (0): kiln::nn::ReLU()\n))";\n')

    def test_not_applicable_by_case_and_file_name(self):
        self.assertEqual(port_check.not_applicable("sample.cpp", "SampleOther.ComplexValues")[0],
                         "complex")
        self.assertEqual(port_check.not_applicable("sample.cpp", "SampleOther.Runs_CUDA")[0],
                         "CUDA-only")
        self.assertEqual(port_check.not_applicable("jit.cpp", "A.B")[0], "JIT/TorchScript")
        self.assertIsNone(port_check.not_applicable("sample.cpp", "ModuleTest.NamedParameters"))

    def test_files_come_from_cmakelists(self):
        self.assertEqual([p.name for p in port_check.test_files(API)], ["sample.cpp"])


class CompilerMessages(unittest.TestCase):
    def test_missing_names_as_kiln_names_without_cascades(self):
        log = "\n".join([
            "u.cpp:3:5: error: 'irange' is not a member of 'c10'",
            "u.cpp:4:5: error: 'class kiln::Tensor' has no member named 'resize_'",
            "u.cpp:5:5: error: 'Variable' was not declared in this scope",
            "u.cpp:6:5: error: 'x' was not declared in this scope",
            "u.cpp:7:5: error: 'MaxPool1d' in namespace 'torch::nn' does not name a type",
            "u.cpp:8:5: error: 'irange' is not a member of 'c10'",
        ])
        unit = "Variable x = torch::ones({2});\n"
        self.assertEqual(port_check.missing_names(log, unit),
                         ["kiln::irange", "kiln::Tensor::resize_", "Variable",
                          "kiln::nn::MaxPool1d"])

    def test_arguments_of_an_undeclared_call_are_not_names_of_their_own(self):
        unit = "int a = MAKE_LIB(_test);\nint b = MAKE_LIB(_test, CPU);\n"
        log = "\n".join([
            "u.cpp:1:18: error: '_test' was not declared in this scope",
            "u.cpp:1:9: error: 'MAKE_LIB' was not declared in this scope",
            "u.cpp:2:24: error: 'CPU' was not declared in this scope",
        ])
        self.assertEqual(port_check.missing_names(log, unit), ["MAKE_LIB"])


@unittest.skipUnless(BUILD_DIR or len(sys.argv) > 1, "needs a kiln build dir")
class EndToEnd(unittest.TestCase):
    def test_run_on_the_fixture(self):
        with tempfile.TemporaryDirectory() as work:
            env = dict(os.environ, PORT_CHECK_WORK=work, JOBS="2")
            done = subprocess.run(["bash", str(HERE / "run.sh"), str(HERE / "fixture"),
                                   BUILD_DIR], env=env, capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            results = {r["id"]: r for r in
                       json.loads(pathlib.Path(work, "results.json").read_text())}
            report = pathlib.Path(work, "report.md").read_text()
        self.assertEqual(len(results), 6)
        passes = results["SampleTest.PassesWithAliases"]
        self.assertTrue(passes["compiled"] and passes["passed"], done.stdout)
        fails = results["SampleOther.FailsWhenRun"]
        self.assertTrue(fails["compiled"] and not fails["passed"])
        self.assertFalse(results["SampleOther.UsesMissingHelper"]["compiled"])
        self.assertEqual(results["SampleOther.UsesMissingHelper"]["missing"],
                         ["kiln::port_check_no_such_function"])
        self.assertEqual(results["SampleOther.MissingMember"]["missing"],
                         ["kiln::Tensor::port_check_no_such_member_"])
        self.assertEqual(results["SampleOther.ComplexValues"]["skipped"], "complex")
        self.assertEqual(results["SampleOther.Runs_CUDA"]["skipped"], "CUDA-only")
        self.assertIn("total                         4        2       1", done.stdout)
        self.assertIn("| 1 | 1 | `kiln::port_check_no_such_function` |", report)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        BUILD_DIR = sys.argv.pop(1)
    unittest.main()
