# The test command of the README and of CI.
.PHONY: test bench-dag
test:
	./scripts/bootstrap
	.venv/bin/python -m pytest -n 2 --dist loadfile

bench-dag:
	./scripts/bootstrap
	.venv/bin/python benchmarks/dag_hops.py
