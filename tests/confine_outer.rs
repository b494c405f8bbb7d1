//! IKIGAI_TOOLS_CONFINE=outer (docs/CONFINEMENT.md, "Where a layer is missing").
