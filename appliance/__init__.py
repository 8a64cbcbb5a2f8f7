"""appliance: the `kopa` command, configuration, the operational metadata DB and service start-up."""

__all__: list[str] = []  # a namespace: import the modules themselves
