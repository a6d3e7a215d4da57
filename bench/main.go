// Command bench runs nxkv's comparative benchmark suite. PLACEHOLDER: the
// suite is being built; this prints a notice so `go run ./bench` works.
package main

import "fmt"

func main() { fmt.Println("nxkv bench: suite under construction") }
