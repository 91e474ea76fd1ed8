//go:build !race

package all

const raceEnabled = false
