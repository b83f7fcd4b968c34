// Package tomlconf reads and writes config files from the config structs
// themselves. A file is written from the structs' tags: each field's
// `toml` tag is its key and its `comment` tag the text above it, so a key
// added to a struct is written (and documented) with no template to keep
// in step. It is a small writer of our own rather than
// github.com/pelletier/go-toml/v2, which writes comment tags but stores a
// time.Duration as integer nanoseconds and refuses "30s" when reading
// (pelletier/go-toml#767): every duration would need a wrapper type.
// Reading stays with BurntSushi/toml, which takes "30s", and refuses any
// key no struct field has, so a typo never silently falls back to a
// default.
//
// Tags the writer reads beside `toml`:
//
//	comment:"..."  text written above the key or table; "\n" breaks a line,
//	               and a line starting with two spaces is never re-wrapped.
//	example:"..."  for a zero string: the key is written commented out with
//	               this placeholder, so the operator sees how to set it.
//
// An empty array of tables is written as one commented-out entry, so its
// keys are on the page too.
package tomlconf
