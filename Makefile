# The one task runner. Every target bootstraps its own virtual environment from
# pyproject.toml, pinned by constraints.txt, so nothing depends on what was installed by hand.
# `make demo` installs only what the demo runs on (cairn and its local embedder); the targets
# that need the development tools add them to the same environment.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_STAMP := $(VENV)/.installed-demo
STAMP := $(VENV)/.installed
DEMO_EXTRAS ?= onnx
EXTRAS ?= dev,onnx

.PHONY: demo install test soak fault-matrix check stack-check lint format typecheck bench bench-quick clean test-sdk

$(DEMO_STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[$(DEMO_EXTRAS)]'
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[$(EXTRAS)]'
	touch $(STAMP)

demo: $(DEMO_STAMP)
	$(VENV)/bin/cairn demo --store $(CURDIR)/.cairn-demo/demo.db --fresh

# `cairn` on PATH for everyday use, in an environment of its own: pipx or uv, whichever exists,
# else (or with INSTALLER=venv) a virtual environment under INSTALL_HOME with its `cairn` linked
# into INSTALL_BIN. Each needs the package index (tests/unit/test_make_install.py, run by hand).
INSTALLER ?= auto
INSTALL_HOME ?= $(if $(XDG_DATA_HOME),$(XDG_DATA_HOME),$(HOME)/.local/share)/cairn
INSTALL_BIN ?= $(HOME)/.local/bin
install:
	@if [ "$(INSTALLER)" = auto ] && command -v pipx >/dev/null 2>&1; then \
	    pipx install --force --pip-args='-c $(CURDIR)/constraints.txt' '$(CURDIR)[onnx,mcp]'; \
	elif [ "$(INSTALLER)" = auto ] && command -v uv >/dev/null 2>&1; then \
	    uv tool install --force --constraint '$(CURDIR)/constraints.txt' '$(CURDIR)[onnx,mcp]'; \
	elif [ "$(INSTALLER)" = auto ] || [ "$(INSTALLER)" = venv ]; then \
	    echo "make install: no pipx or uv; installing into $(INSTALL_HOME)/venv" >&2; \
	    $(PYTHON) -m venv '$(INSTALL_HOME)/venv' && \
	    '$(INSTALL_HOME)/venv/bin/python' -m pip install --quiet --disable-pip-version-check \
	        -c '$(CURDIR)/constraints.txt' '$(CURDIR)[onnx,mcp]' && \
	    '$(INSTALL_HOME)/venv/bin/python' -m pip install --quiet --disable-pip-version-check \
	        --no-deps --force-reinstall '$(CURDIR)' && \
	    mkdir -p '$(INSTALL_BIN)' && ln -sf '$(INSTALL_HOME)/venv/bin/cairn' '$(INSTALL_BIN)/cairn' && \
	    echo "make install: $(INSTALL_BIN)/cairn is $$('$(INSTALL_BIN)/cairn' --version)" >&2 && \
	    case ":$$PATH:" in *":$(INSTALL_BIN):"*) ;; \
	        *) echo "make install: $(INSTALL_BIN) is not on PATH; add it (e.g. in ~/.profile:" \
	               "export PATH=\"$(INSTALL_BIN):\$$PATH\")" >&2 ;; esac; \
	else \
	    echo "make install: INSTALLER must be auto or venv, not '$(INSTALLER)'" >&2; exit 2; \
	fi

test: $(STAMP)
	$(PY) -m pytest -q

# The real-process tests at five times their `make test` size (docs/reliability.md).
soak: $(STAMP)
	CAIRN_SOAK_SCALE=5 $(PY) -m pytest -q tests/processes

# Run the marked fault tests and write the fault matrix into docs/reliability.md.
fault-matrix: $(STAMP)
	$(PY) -m tests.fault_matrix --write

lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck: $(STAMP)
	$(VENV)/bin/mypy shared/cairn

check: lint typecheck test stack-check

# Every stack variant synthesized offline, cdk-nag and cfn-lint over each (infra/check.py).
stack-check: $(STAMP)
	$(CDK_ENV) $(PY) -m infra.check

# Bench-only packages (the plot, the mem0 peer); mem0ai goes in without its protobuf<7 pin,
# which constraints.txt refuses and mem0 never imports (see benchmarks/requirements.txt).
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP) benchmarks/requirements.txt
	$(PY) -m pip install --quiet -c constraints.txt -r benchmarks/requirements.txt
	$(PY) -m pip install --quiet --no-deps mem0ai==2.2.1
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) -m benchmarks

bench-quick: $(BENCH_STAMP)
	$(PY) -m benchmarks --quick

# The bedrock-agentcore SDK's own memory integration tests (tests_integ/memory, from the sdist of
# the version constraints.txt pins) against `cairn serve` on loopback, offline. It downloads the
# sdist from PyPI into build/ (never committed), so `make test` and CI do not run it; it
# rewrites the pass count in docs/agentcore-compatibility.md (tests/sdk_integ).
SDK_VERSION := $(shell sed -n 's/^bedrock-agentcore==//p' constraints.txt)
SDK_BUILD := build/sdk-integ

test-sdk: $(STAMP)
	rm -rf $(SDK_BUILD) && mkdir -p $(SDK_BUILD)
	$(PY) -m pip download --quiet --no-binary :all: --no-deps --dest $(SDK_BUILD) \
	    bedrock-agentcore==$(SDK_VERSION)
	tar -xzf $(SDK_BUILD)/bedrock_agentcore-$(SDK_VERSION).tar.gz -C $(SDK_BUILD)
	PYTHONPATH=$(CURDIR) $(PY) -m tests.sdk_integ $(SDK_BUILD)/bedrock_agentcore-$(SDK_VERSION)

clean:
	rm -rf $(VENV) .cairn-demo .pytest_cache .mypy_cache .ruff_cache build shared/*.egg-info

# --- AWS: the CDK template, the Lambda code assets (no Docker) and the deploy -----------------
# `make deploy` is the one command from a fresh clone: it builds the Lambda assets, then runs
# `cdk deploy` with this checkout's Python (CDK_ARGS passes more `-c key=value`; EMBEDDER=onnx
# builds the onnx extra in and deploys with `-c embedder=onnx`). A `cdk deploy` without built
# assets refuses to synthesize (infra/components/lambda_code.py). `make synth` writes cdk.out/
# offline with placeholder code, in a template CloudFormation refuses to deploy, and fails on
# any unacknowledged cdk-nag finding. `make lambda-assets` downloads wheels from PyPI, so `make
# test` never runs it: each functions/<fn>/ becomes build/lambda/<fn>/ (dependencies built for
# the Lambda platform + the functions package, compiled to bytecode by the Lambda's Python
# version when one runs here; infra/lambda_assets.py lays it out, tests/infra/test_lambda_assets.py
# checks that offline), and build/lambda/manifest.json records the extras built in. LAMBDA_PYTHON
# must match the runtime in infra/components/lambda_defaults.py (a test checks it).
CDK_ENV := JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 CDK_DISABLE_CLI_TELEMETRY=true
LAMBDA_PYTHON ?= 3.12
# The interpreter that compiles the bytecode; without a Python $(LAMBDA_PYTHON) that runs,
# `make lambda-assets` ships no bytecode and says so (`make deploy` refuses).
LAMBDA_COMPILER ?= python$(LAMBDA_PYTHON)
EMBEDDER ?= bedrock
ONNX_EXTRAS := aws,onnx
LAMBDA_EXTRAS ?= $(if $(filter onnx,$(EMBEDDER)),$(ONNX_EXTRAS),aws)
LAMBDA_REQUIREMENTS ?= aws-lambda-powertools[tracer]
# Lambda's Python 3.12 runs on Amazon Linux 2023 (glibc 2.34): manylinux_2_28 wheels run there, and
# current numpy ships no manylinux2014 aarch64 wheel any more. pip expands each to older tags.
LAMBDA_PLATFORMS := --platform manylinux2014_aarch64 --platform manylinux_2_28_aarch64
FUNCTIONS_DIR ?= functions
LAMBDA_BUILD := build/lambda
CDK ?= npx --yes aws-cdk@2
CDK_ARGS ?=

.PHONY: synth lambda-assets deploy deploy-prerequisites

synth: $(STAMP)
	rm -rf cdk.out
	$(CDK_ENV) CDK_CONTEXT_JSON='{"lambdaCode":"placeholder"}' $(PY) -m infra.app

deploy-prerequisites:
	@command -v node >/dev/null || { echo "deploy needs Node.js 20+ (the CDK CLI runs on it)"; exit 1; }
	@$(LAMBDA_COMPILER) -c 'import sys; sys.exit(sys.version_info[:2] != tuple(map(int, "$(LAMBDA_PYTHON)".split("."))))' 2>/dev/null || { echo "deploy needs Python $(LAMBDA_PYTHON) to compile the Lambda bytecode: put python$(LAMBDA_PYTHON) on PATH or pass LAMBDA_COMPILER=<its path>"; exit 1; }
	@command -v aws >/dev/null && aws sts get-caller-identity >/dev/null 2>&1 || { echo "deploy needs AWS credentials: aws sts get-caller-identity must work"; exit 1; }

deploy: deploy-prerequisites lambda-assets
	$(CDK_ENV) $(CDK) deploy --app "$(PY) -m infra.app" -c embedder=$(EMBEDDER) $(CDK_ARGS)

lambda-assets: $(STAMP)
	rm -rf $(LAMBDA_BUILD) build/lambda-deps build/wheels
	$(PY) -m pip wheel --quiet --no-deps --wheel-dir build/wheels .
	$(PY) -m pip install --quiet --target build/lambda-deps --no-compile \
	    $(LAMBDA_PLATFORMS) --implementation cp --python-version $(LAMBDA_PYTHON) \
	    --only-binary=:all: -c constraints.txt \
	    "$$(ls build/wheels/cairn-*.whl)[$(LAMBDA_EXTRAS)]" $(LAMBDA_REQUIREMENTS)
	$(PY) -m infra.lambda_assets --deps build/lambda-deps --functions $(FUNCTIONS_DIR) \
	    --out $(LAMBDA_BUILD) --extras "$(LAMBDA_EXTRAS)" --python $(LAMBDA_PYTHON) \
	    --compiler "$(LAMBDA_COMPILER)"
