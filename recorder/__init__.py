"""recorder: record/replay transport, cassette bundles, drift reports and the sandbox upstream."""
