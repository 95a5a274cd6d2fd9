# udev end-to-end targets (placeholder, filled by the rules work)
.PHONY: udevtest udevbench
udevtest:
udevbench:
