package agents

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Schema is a tool's JSON schema: what the model is told about the
// arguments and what checks a call. ValidateArgs understands the subset the
// registry's schemas use: type (object, string, integer, number, boolean,
// array), properties, required, additionalProperties (false), minLength and
// maxLength (characters), minimum and maximum, items, enum.
type Schema = map[string]any

// maxArgDepth bounds how deeply arguments may nest.
const maxArgDepth = 16

// ValidateArgs checks v (decoded JSON: map[string]any, []any, string,
// float64, json.Number, bool, nil) against schema and says, in one
// sentence a model can act on, what is wrong.
func ValidateArgs(schema Schema, v any) error {
	return validateAt(schema, v, "arguments", 0)
}

func validateAt(schema Schema, v any, at string, depth int) error {
	if depth > maxArgDepth {
		return fmt.Errorf("%s: nested too deeply", at)
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return e == v }) {
		return fmt.Errorf("%s: must be one of %v", at, enum)
	}
	typ, _ := schema["type"].(string)
	switch typ {
	case "", "any":
		return nil
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: must be an object", at)
		}
		props, _ := schema["properties"].(map[string]any)
		for _, name := range stringList(schema["required"]) {
			if _, ok := obj[name]; !ok {
				return fmt.Errorf("%s: %q is required", at, name)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the same input, the same first complaint
		for _, k := range keys {
			sub, ok := props[k].(map[string]any)
			if !ok {
				if extra, ok := schema["additionalProperties"].(bool); ok && !extra {
					return fmt.Errorf("%s: unknown field %q", at, clip(k, 40))
				}
				continue
			}
			if err := validateAt(sub, obj[k], at+"."+k, depth+1); err != nil {
				return err
			}
		}
		return nil
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: must be an array", at)
		}
		if n, ok := number(schema["maxItems"]); ok && float64(len(arr)) > n {
			return fmt.Errorf("%s: at most %v items", at, n)
		}
		items, _ := schema["items"].(map[string]any)
		for i, it := range arr {
			if err := validateAt(items, it, fmt.Sprintf("%s[%d]", at, i), depth+1); err != nil {
				return err
			}
		}
		return nil
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: must be a string", at)
		}
		if !utf8.ValidString(s) {
			return fmt.Errorf("%s: must be valid UTF-8", at)
		}
		n := float64(utf8.RuneCountInString(s))
		if min, ok := number(schema["minLength"]); ok && n < min {
			return fmt.Errorf("%s: at least %v characters", at, min)
		}
		if max, ok := number(schema["maxLength"]); ok && n > max {
			return fmt.Errorf("%s: at most %v characters", at, max)
		}
		return nil
	case "integer", "number":
		f, ok := number(v)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s: must be a number", at)
		}
		if typ == "integer" && f != math.Trunc(f) {
			return fmt.Errorf("%s: must be an integer", at)
		}
		if min, ok := number(schema["minimum"]); ok && f < min {
			return fmt.Errorf("%s: at least %v", at, min)
		}
		if max, ok := number(schema["maximum"]); ok && f > max {
			return fmt.Errorf("%s: at most %v", at, max)
		}
		return nil
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: must be true or false", at)
		}
		return nil
	}
	return fmt.Errorf("%s: the schema names an unknown type %q", at, typ)
}

// number reads a JSON number as a float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func stringList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, s := range l {
			if s, ok := s.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// clip cuts s to n characters for a message.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "�")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// DecodeArgs reads a call's arguments (a JSON object's text) and checks
// them against schema.
func DecodeArgs(schema Schema, raw string) (map[string]any, error) {
	if strings.TrimSpace(raw) == "" {
		raw = "{}"
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, fmt.Errorf("arguments: not valid JSON")
	}
	if err := ValidateArgs(schema, v); err != nil {
		return nil, err
	}
	args, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments: must be an object")
	}
	return args, nil
}
