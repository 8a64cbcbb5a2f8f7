"""appliance: the `kopa` command, configuration, the operational metadata DB and service start-up."""
