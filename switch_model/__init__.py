"""Reference model of the fabric switch (p4src/switch/), from DESIGN.md
section 4: `pipeline.SwitchModel`."""
