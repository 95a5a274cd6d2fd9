# VM harness targets: see test/vm/HARNESS.md. (placeholder, filled by the harness work)
.PHONY: vmtest vmbench
vmtest:
vmbench:
