# A thin Makefile over meson.  `make run` and `make test` work on a fresh
# Debian 12 machine: they install missing packages first.
BUILD ?= build
SAN_BUILD ?= build-san
TSAN_BUILD ?= build-tsan
MESON_SETUP = meson setup --native-file scripts/llvm19.ini

# Needed by the tests only (tests/onnx_torch.py exports models with PyTorch, tests/onnx_backend.py
# runs ONNX's backend suite from libonnx-testdata; tests/dot_check.py
# counts instructions with valgrind).
TEST_PKGS = python3-torch python3-torchvision python3-onnx libonnx-testdata valgrind

FUZZ_PKGS = clang-19 libfuzzer-19-dev

.PHONY: all deps test-deps fuzz-deps fuzz-ci run test test-san test-tsan bench bench-cnn bench-conv-tail bench-video bench-rnn bench-train bench-transformer bench-ab bench-schedule bench-tune bench-zoo bench-compile clean format format-check

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

deps:
	@scripts/install-deps

test-deps:
	@scripts/install-deps $(TEST_PKGS)

# The libFuzzer targets' compiler (scripts/fuzz installs it too on first use).
fuzz-deps:
	@scripts/install-deps $(FUZZ_PKGS)

# A short, repeatable run of every libFuzzer target (CI): each on its seeds
# and generated inputs, FUZZ_RUNS in all, with a fixed random seed (scripts/fuzz --ci).
FUZZ_RUNS ?= 4000
fuzz-ci: deps test-deps fuzz-deps
	@scripts/fuzz --ci $(FUZZ_RUNS)

$(BUILD)/build.ninja: | deps
	$(MESON_SETUP) $(BUILD)

$(SAN_BUILD)/build.ninja: | deps
	$(MESON_SETUP) -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug $(SAN_BUILD)

$(TSAN_BUILD)/build.ninja: | deps
	$(MESON_SETUP) -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug $(TSAN_BUILD)

run: deps all
	$(BUILD)/rly examples/tour.rly

test: deps test-deps all
	@scripts/run-tests $(BUILD)

test-san: deps test-deps $(SAN_BUILD)/build.ninja test-tsan
	ninja -C $(SAN_BUILD)
	@scripts/run-tests $(SAN_BUILD)

# The tests of engines on several threads under ThreadSanitizer (any race
# fails them); only what they need is built.
TSAN_TESTS = sessions_threads
test-tsan: deps $(TSAN_BUILD)/build.ninja
	ninja -C $(TSAN_BUILD) $(addprefix tests/,$(TSAN_TESTS)) jit/rly-jit.so
	TSAN_OPTIONS=halt_on_error=1 meson test -C $(TSAN_BUILD) --no-rebuild --print-errorlogs $(TSAN_TESTS)

bench: deps all
	$(BUILD)/bench/parse
	$(BUILD)/bench/prng
	$(BUILD)/bench/pool
	/usr/bin/python3 bench/interp.py $(BUILD)/rly
	/usr/bin/python3 bench/jit.py $(BUILD)/rly
	/usr/bin/python3 bench/models.py $(BUILD)/rly

# CNNs (resnet18, mobilenet_v2, ResNet-18's convs) against PyTorch and ONNX
# Runtime at 1 and 2 threads; needs python3-torch(vision) and node/npm.
bench-cnn: deps test-deps all
	/usr/bin/python3 bench/cnn.py $(BUILD)/rly

# torchvision's r3d_18 video network (16 and 8 frames) and each of its 3-D convolutions
# against PyTorch and ONNX Runtime at one thread (bench/video.py).
bench-video: deps test-deps all
	/usr/bin/python3 bench/video.py $(BUILD)/rly --threads 1
# Grouped and depthwise convolutions and a ShuffleNetV2 block, each alone, against ONNX
# Runtime at 1 thread (bench/conv_tail.py).
bench-conv-tail: deps test-deps all
	/usr/bin/python3 bench/conv_tail.py $(BUILD)/rly

# LSTM and GRU layers against ONNX Runtime and PyTorch at 1 and 2 threads (bench/rnn.py).
bench-rnn: deps test-deps all
	/usr/bin/python3 bench/rnn.py $(BUILD)/rly

# Training the digits MLP (examples/train_digits.rly) against PyTorch on one thread (bench/train.py).
bench-train: deps test-deps all
	/usr/bin/python3 bench/train.py $(BUILD)/rly

# A GPT-2-structured decoder against ONNX Runtime and PyTorch (bench/transformer.py).
bench-transformer: deps test-deps all
	/usr/bin/python3 bench/transformer.py $(BUILD)/rly

# Two builds against each other (parse, start-up, interpreter, MLP, matmul, resnet18), as
# ratios: `make bench-ab A=old/rly` compares A with this build (bench/ab.py).
A ?= $(BUILD)/rly
# The course's mm_relu unscheduled, after the course's schedule and the best one,
# against the built-in nn.relu(nn.dense) and numpy (bench/schedule.py).
bench-schedule: deps all
	/usr/bin/python3 bench/schedule.py $(BUILD)/rly

# :tune's schedules (64 trials) of a 512 matmul and a 256 mm_relu against the
# functions as written and the built-in ops (bench/tune.py).
bench-tune: deps all
	/usr/bin/python3 bench/tune.py $(BUILD)/rly

# Real networks (torchvision's families, r3d_18, a dynamic-length transformer encoder, a
# bidirectional LSTM, ResNet-50 / ResNeXt-50 as TVM text) against ONNX Runtime and PyTorch,
# checked and timed at one thread (bench/zoo.py; ZOO="--only resnet50 --threads 1,2 ...").
ZOO ?=
bench-zoo: deps test-deps all
	/usr/bin/python3 bench/zoo.py $(BUILD)/rly $(ZOO)

bench-ab: deps test-deps all
	/usr/bin/python3 bench/ab.py $(A) $(BUILD)/rly

# Cold compiles (an empty disk cache) of six torchvision CNNs: first call, CPU time,
# kernels / distinct kernels, CPU ms per kernel, and the steady call time; OLD=path/rly
# adds another build's row and the ratios (bench/compile.py).
bench-compile: deps test-deps all
	/usr/bin/python3 bench/compile.py $(BUILD)/rly $(if $(OLD),--old $(OLD))

# The tree is formatted by clang-format-19 with .clang-format; CI checks it.
SOURCES = $(shell git ls-files '*.c' '*.h')
format:
	@scripts/install-deps clang-format-19
	clang-format-19 -i $(SOURCES)

format-check:
	@scripts/install-deps clang-format-19
	clang-format-19 --dry-run --Werror $(SOURCES)

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
