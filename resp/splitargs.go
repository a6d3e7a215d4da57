package resp

// splitArgs splits an inline request line into arguments as Redis does
// (sdssplitargs): arguments are separated by spaces; "double quotes" allow
// the escapes \xHH, \n, \r, \t, \b, \a and \<c>; 'single quotes' allow \';
// a closing quote must be followed by a space or the end of the line. It
// appends the arguments to args, their bytes to arena, and returns both;
// ok is false for unbalanced quotes.
func splitArgs(line []byte, args [][]byte, arena []byte) (_ [][]byte, _ []byte, ok bool) {
	var bounds [2 * 16]int
	offs := bounds[:0]
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			break
		}
		start := len(arena)
		inDouble, inSingle, done := false, false, false
		for !done {
			if inDouble {
				switch {
				case i >= len(line):
					return args, arena, false
				case line[i] == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					arena = append(arena, unhex(line[i+2])<<4|unhex(line[i+3]))
					i += 3
				case line[i] == '\\' && i+1 < len(line):
					i++
					arena = append(arena, unescape(line[i]))
				case line[i] == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return args, arena, false
					}
					done = true
				default:
					arena = append(arena, line[i])
				}
			} else if inSingle {
				switch {
				case i >= len(line):
					return args, arena, false
				case line[i] == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					arena = append(arena, '\'')
				case line[i] == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return args, arena, false
					}
					done = true
				default:
					arena = append(arena, line[i])
				}
			} else {
				switch {
				case i >= len(line):
					done = true
				case line[i] == ' ' || line[i] == '\n' || line[i] == '\r' || line[i] == '\t' || line[i] == 0:
					done = true
				case line[i] == '"':
					inDouble = true
				case line[i] == '\'':
					inSingle = true
				default:
					arena = append(arena, line[i])
				}
			}
			if i < len(line) {
				i++
			}
		}
		offs = append(offs, start, len(arena))
	}
	for j := 0; j < len(offs); j += 2 {
		args = append(args, arena[offs[j]:offs[j+1]:offs[j+1]])
	}
	return args, arena, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}
