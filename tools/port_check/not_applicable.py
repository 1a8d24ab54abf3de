"""The cases of PyTorch's test/cpp/api that do not apply to kiln, with the reasons (port_check.py
skips them and counts them apart)."""

# Categories of cases that do not apply to kiln: (category, what is matched, regex, reason).
# "file" matches the test file's name, "case" matches "Suite.Name".
NOT_APPLICABLE = [
    ("libtorch internals", "file", r"^static\.cpp$",
     "tests the template helpers inside libtorch's implementation (torch/detail/static.h: "
     "all_of, any_of, apply, enable_if_module_t, return_type_of_forward_t), not its API"),
    ("CUDA-only", "file", r"^(tensor_cuda|tensor_options_cuda|parallel)\.cpp$",
     "needs a CUDA device (none on the measuring machine) and libtorch's CUDA-only API"),
    ("CUDA-only", "case", r"CUDA",
     "PyTorch runs it only with CUDA devices (its main filters *_CUDA cases out without them)"),
    ("JIT/TorchScript", "file", r"^jit\.cpp$",
     "TorchScript compiler and interpreter: kiln has no JIT"),
    ("JIT/TorchScript", "case", r"TorchScript|IValue",
     "TorchScript values and modules: kiln has no JIT"),
    ("pickle archives", "case", r"[Pp]ickle",
     "Python pickle format: kiln's archives are its own format"),
    ("complex", "file", r"^fft\.cpp$",
     "FFTs return complex tensors: kiln has no complex dtypes"),
    ("complex", "case", r"[Cc]omplex",
     "complex dtypes: kiln has none"),
    ("sparse", "case", r"[Ss]parse",
     "sparse layouts: kiln tensors are strided only"),
    ("quantized", "case", r"[Qq]uantiz|QInt|QUInt",
     "quantized dtypes: kiln has none"),
    ("named tensors", "case", r"NamedTensor|Dimname|^ModulesTest\.Unflatten$",
     "named dimensions: kiln has none (ModulesTest.Unflatten unflattens a named dimension too)"),
    ("disabled upstream", "case", r"(^|\.)DISABLED_",
     "disabled in PyTorch itself"),
    # UtilsTest.AmbiguousOperatorDefaults calls at::_test_ambiguous_defaults, an operator of
    # ATen's code generator's own tests; FunctionalTest.Interpolate takes its expected values
    # from at::native::_upsample_nearest_exact1d/2d/3d.
    ("libtorch internals", "case",
     r"^(UtilsTest\.AmbiguousOperatorDefaults|FunctionalTest\.Interpolate)$",
     "calls a libtorch internal that kiln does not have by design (at::native kernels, ATen's "
     "test operators)"),
    # Cases whose expected numbers are values PyTorch drew from its seeded CPU generator, listed
    # one by one (a case that only seeds for repeatability still counts).
    ("PyTorch's random stream", "case",
     r"^(InitTest\.ProducesPyTorchValues_|ModulesTest\.(RNN|LSTM|GRU)Cell$)",
     "expects the numbers PyTorch's CPU Mersenne Twister draws after manual_seed(0): kiln draws "
     "Philox numbers, the same on every device (docs/porting.md)"),
]
