"""One widget per module. Their styles live in `ui/app.tcss` (theme `$variables` only), so one
file shows how every theme reaches every widget."""
