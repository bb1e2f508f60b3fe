"""Pure controllers: samples in, decisions out. No I/O, no clocks."""
