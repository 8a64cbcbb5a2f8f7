"""The air-gapped OCI image, built without a Docker daemon or an image registry (``make image``).

- ``containerfile``: the Dockerfile's rules (lint) and its buildah form;
- ``buildah``: the buildah command lines, on one storage folder (vfs driver, chroot isolation);
- ``base``: the base root filesystem from Debian packages (mmdebstrap), imported into buildah's storage;
- ``context``: the build context (Dockerfile, wheelhouse hard links, signed cassette bundles);
- ``build``: ``python -m image.build``: base, context, ``buildah bud`` inside ``unshare -n``;
- ``check``: ``python -m image.check``: the image run as a deployment runs it (loopback only, non-root);
- ``ship``: ``python -m image.ship``: OCI and docker archives with sha256, and the CycloneDX SBOM;
- ``gpu``: whether the GPU variant's wheelhouse can be made on this machine.

Everything it writes lives under one folder (``--dir``, ``IMAGE_DIR`` in the Makefile).
"""
