module testbed/bench/porcupine

go 1.19

require github.com/anishathalye/porcupine v0.0.0
