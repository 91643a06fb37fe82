package views

import (
	"strconv"
	"strings"
)

// Count writes n with thousands separators: 1,234,567.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Bytes writes a size for people: 512 B, 1.5 KB, 12.3 MB, 2.0 GB (powers of
// 1024, as file managers and du -h count).
func Bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := float64(n)
	for _, suffix := range []string{"KB", "MB", "GB", "TB"} {
		v /= unit
		if v < unit && v > -unit || suffix == "TB" {
			return strconv.FormatFloat(v, 'f', 1, 64) + " " + suffix
		}
	}
	return ""
}

// Percent writes part/whole as "12.5%", or "–" when whole is 0.
func Percent(part, whole int64) string {
	if whole == 0 {
		return "–"
	}
	return strconv.FormatFloat(Rate(part, whole), 'f', 1, 64) + "%"
}

// Rate is part/whole in percent, 0 when whole is 0.
func Rate(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) * 100 / float64(whole)
}
