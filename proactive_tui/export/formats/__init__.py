"""Built-in export formats, one module each; importing a module registers its Exporter."""
