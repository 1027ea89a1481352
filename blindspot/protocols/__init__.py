"""Meta-evaluation protocols: what judges a metric's scores on gold vs. noised data (see
``shared/spec/PROTOCOLS.md``), one module per protocol, found by name in
:data:`blindspot.protocols.interface.PROTOCOLS`."""
