package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium returns the headless browser, or skips the test when there is
// none (CI sets SHARDSIM_REQUIRE_CHROMIUM=1 and installs Debian's).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("SHARDSIM_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium is required (SHARDSIM_REQUIRE_CHROMIUM=1) but not installed")
	}
	t.Skip("chromium is not installed")
	return ""
}

// browse loads a page in headless chromium, offline, and returns the DOM
// after its scripts ran.
func browse(t *testing.T, browser, page string) string {
	t.Helper()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=2000", "--dump-dom", "file://" + page}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, browser, args...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return string(out)
}

// The -viz page of a failing coord run and of a failing migrate run opens
// in a real browser, with its script run, and shows the violation: the
// verdict banner names the property, the violation is drawn on the
// timeline and its record is the highlighted last row.
func TestVizPageShowsTheViolationInABrowser(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	runs := []struct {
		name, property string
		args           []string
	}{
		{"coord", "C.SplitAtomicity", []string{"-scenario", "coord", "-seed", "4", "-bug", "coord.split-two-txns"}},
		{"migrate", "M.CleanupSafe", []string{"-scenario", "migrate", "-seed", "2", "-bug", "migrate.cleanup-before-promotion"}},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			page := filepath.Join(dir, r.name+".html")
			code, out, stderr := simrun(t, append([]string{"run", "-viz", page}, r.args...)...)
			if code != 1 || !strings.Contains(out, r.property) {
				t.Fatalf("run exit %d, want a %s violation:\n%s%s", code, r.property, out, stderr)
			}
			html, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			for _, remote := range []string{"src=\"http", "href=\"http", "@import", "src=\"//"} {
				if strings.Contains(string(html), remote) {
					t.Fatalf("the page loads something from outside (%q): it must open offline", remote)
				}
			}
			dom := browse(t, browser, page)
			for _, want := range []string{
				`data-rendered="violation"`, // the page's script ran and found the violation row
				`id="verdict" class="violation" data-property="` + r.property + `"`,
				`id="violation-line"`,
				`id="violation-row"`,
				r.property + ":",
			} {
				if !strings.Contains(dom, want) {
					t.Errorf("the rendered page lacks %q", want)
				}
			}
		})
	}
}

// A passing run's page says so, and has no violation to show: the checks
// above can fail.
func TestVizPageOfACleanRun(t *testing.T) {
	browser := chromium(t)
	page := filepath.Join(t.TempDir(), "clean.html")
	if code, out, _ := simrun(t, "run", "-viz", page, "-scenario", "kv", "-seed", "7"); code != 0 {
		t.Fatalf("run exit %d:\n%s", code, out)
	}
	dom := browse(t, browser, page)
	if !strings.Contains(dom, `data-rendered="no-violation"`) || !strings.Contains(dom, `id="verdict" class="ok"`) {
		t.Fatal("a clean run's page does not say it passed")
	}
	if strings.Contains(dom, `id="violation-row"`) || strings.Contains(dom, `id="violation-line"`) {
		t.Fatal("a clean run's page shows a violation")
	}
	if !strings.Contains(dom, "<iframe") || !strings.Contains(dom, "linearizable") {
		t.Fatal("the kv history's porcupine view is missing")
	}
}
