package main

import "github.com/tenzrod/tenzrod/node/nodetest/scale"

func plot(path string, rs []scale.Result) error { return nil }
