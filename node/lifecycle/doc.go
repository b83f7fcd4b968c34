// Package lifecycle starts and stops the parts of a role: in order, and
// if one fails to start, the parts already started are stopped again, in
// reverse; Stop stops every part in reverse order and reports every
// failure. The provider and the validator roles are each such a sequence.
package lifecycle
