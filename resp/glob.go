package resp

// globMatch reports whether s matches the glob pattern p with Redis's rules
// (KEYS, SCAN MATCH): '*' any run, '?' any byte, "[...]" a class with
// "^" negation, "a-z" ranges (either order) and '\' escapes, '\' escaping
// any byte outside a class. An unclosed class runs to the end of the
// pattern.
func globMatch(p, s string) bool {
	skip := false
	return globMatchAt(p, s, &skip, 0)
}

// maxGlobNesting bounds the '*'s a match nests, as Redis does since the
// fix of CVE-2024-31228: past it there is no match. Each nesting is a
// frame on the stack, and a stack overflow aborts the process.
const maxGlobNesting = 1000

// globMatchAt is globMatch; *skip is set once a '*' has tried every suffix
// of s, so enclosing '*'s stop trying longer ones (they cannot match
// either), which keeps patterns like "*a*a*a*b" linear per star. nesting
// counts the enclosing '*'s.
func globMatchAt(p, s string, skip *bool, nesting int) bool {
	if nesting > maxGlobNesting {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if globMatchAt(p[1:], s, skip, nesting+1) {
					return true
				}
				if *skip {
					return false
				}
				s = s[1:]
			}
			*skip = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) >= 2 && p[0] == '\\' {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if len(p) == 0 {
					// Unclosed: leave p empty; the step below is skipped.
					break
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					p = p[2:]
					if s[0] >= lo && s[0] <= hi {
						match = true
					}
				} else if p[0] == s[0] {
					match = true
				}
				p = p[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
			if len(p) == 0 {
				// The unclosed class consumed the pattern.
				return len(s) == 0
			}
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}
