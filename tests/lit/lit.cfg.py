# lit configuration for rly's golden tests: each .rly file carries its own
# RUN lines and CHECK expectations (FileCheck from LLVM 19).
import os
import lit.formats

config.name = "rly"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".rly", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["inputs", "Output"]
# Keep lit's scratch files out of the source tree.
exec_root = os.environ.get("RLY_LIT_EXEC_ROOT")
if exec_root:
    config.test_exec_root = exec_root
rly = os.environ.get("RLY", "rly")
config.substitutions.append(("%rly", rly))
config.substitutions.append(("%python", "/usr/bin/python3"))
config.environment["NO_COLOR"] = "1"
# Every schedule step is checked against the unscheduled function on random inputs.
config.environment["RLY_VERIFY_SCHEDULES"] = "1"
# No tuning database: tests do not see each other's records (tune.test turns it on).
config.environment["RLY_TUNING_DB"] = "0"
config.environment["PATH"] = os.environ.get("PATH", "")
# The host's AVX512-VNNI (tests of the code that uses it say REQUIRES: avx512vnni).
try:
    with open("/proc/cpuinfo") as f:
        if " avx512_vnni" in f.read():
            config.available_features.add("avx512vnni")
except OSError:
    pass
for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "HOME"):
    if k in os.environ:
        config.environment[k] = os.environ[k]
