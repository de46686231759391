#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0
//
// Drive an offsample-flamegraph SVG in Debian's Chromium and check that its
// script works: frames rendered, no page errors, hover details, click zoom,
// Reset Zoom, search (Ctrl-F prompt and the scripting entry point).
//
//   node flamegraph.js --svg FILE --zoom NAME --sibling NAME --parent NAME
//        --search REGEX --matched PCT [--search2 REGEX --matched2 PCT]
//
// NAME is a displayed frame name (data-n).  Screenshots go to $ARTIFACT_DIR
// (default $BATS_TEST_TMPDIR, else /tmp).  Exit 0 when every check passed;
// otherwise the failed check is printed on stderr and the exit status is 1.

"use strict";

const path = require("path");
const { withPage, artifacts: chromiumArtifacts, parseArgs, check } = require("./chromium");

// CSS attribute selector for a frame by its name
function frameSel(name) {
	return `#frames > g.f[data-n="${name.replace(/["\\]/g, "\\$&")}"]`;
}

async function main() {
	const args = parseArgs(process.argv.slice(2),
		["svg", "zoom", "sibling", "parent", "search", "matched"]);
	const artifacts = chromiumArtifacts();
	await withPage({ width: 1280, height: 800, args: ["--disable-gpu"] }, async (page, errors) => {
		await page.goto("file://" + path.resolve(args.svg));
		await page.waitForFunction(() => window.flamegraph !== undefined, null, { timeout: 10000 });
		// fullPage screenshots do not work on SVG documents: size the
		// viewport to the image instead
		const size = await page.evaluate(() => ({
			width: Math.ceil(document.documentElement.width.baseVal.value),
			height: Math.ceil(document.documentElement.height.baseVal.value) }));
		await page.setViewportSize(size);

		const nframes = await page.locator("#frames > g.f").count();
		check(nframes > 1, `SVG rendered ${nframes} frames`);
		const plotw = await page.evaluate(() => FG.plotw);
		const rectW = (name) => page.locator(frameSel(name) + " > rect").first()
			.evaluate((r) => parseFloat(r.getAttribute("width")));
		const rectFill = (name) => page.locator(frameSel(name) + " > rect").first()
			.evaluate((r) => r.getAttribute("fill"));

		// hover shows the details line
		await page.locator(frameSel(args.zoom)).first().hover();
		const det = await page.locator("#details").textContent();
		check(det.startsWith(`Function: ${args.zoom} (`) && /%\)$/.test(det),
			`hover details: "${det}"`);

		// click zoom
		const w0 = await rectW(args.zoom), sib0 = await rectW(args.sibling);
		check(w0 < plotw - 1, `${args.zoom} is narrower than the plot before zoom (${w0})`);
		await page.locator(frameSel(args.zoom)).first().click();
		const w1 = await rectW(args.zoom);
		check(Math.abs(w1 - plotw) < 0.5, `${args.zoom} is full width after click (${w1} ~ ${plotw})`);
		check(!(await page.locator(frameSel(args.sibling)).first().isVisible()),
			`sibling ${args.sibling} hidden after zoom`);
		check(await page.locator(frameSel(args.parent)).first()
			.evaluate((g) => g.classList.contains("parent") && getComputedStyle(g).opacity === "0.5"),
			`ancestor ${args.parent} dimmed after zoom`);
		check(await page.locator("#unzoom").isVisible(), "Reset Zoom shown");

		// search through the keyboard: Ctrl-F opens a prompt
		page.once("dialog", (d) => d.accept(args.search));
		await page.keyboard.press("Control+f");
		await page.waitForFunction(() => document.getElementById("matched").textContent.trim() !== "");
		const matched = (await page.locator("#matched").textContent()).trim();
		check(matched === `Matched: ${args.matched}%`, `Ctrl-F search /${args.search}/ -> "${matched}"`);
		const hl = await page.evaluate(() => FG.hl);
		const res = await page.evaluate((t) => {
			const re = new RegExp(t);
			return window.flamegraph.frames.slice(1).map((f) =>
				[f.name, re.test(f.name), f.r.getAttribute("fill"), f.fill]);
		}, args.search);
		const hits = res.filter((r) => r[1]);
		check(hits.length > 0 && hits.every((r) => r[2] === hl),
			`${hits.length} matching frames highlighted in ${hl}`);
		check(res.filter((r) => !r[1]).every((r) => r[2] === r[3]),
			"non-matching frames keep their colour");
		await page.screenshot({ path: path.join(artifacts, "flamegraph-zoom-search.png") });

		// Reset Zoom restores the layout, the search stays
		await page.locator("#unzoom").click();
		check(Math.abs((await rectW(args.zoom)) - w0) < 0.01, `${args.zoom} width restored (${w0})`);
		check(await page.locator(frameSel(args.sibling)).first().isVisible()
			&& Math.abs((await rectW(args.sibling)) - sib0) < 0.01,
			`sibling ${args.sibling} visible again`);
		check(!(await page.locator("#unzoom").isVisible()), "Reset Zoom hidden again");

		// the scripting entry point, e.g. with nested matches
		if (args.search2) {
			const r = await page.evaluate((t) => window.flamegraph.search(t), args.search2);
			const m = (await page.locator("#matched").textContent()).trim();
			check(m === `Matched: ${args.matched2}%`,
				`search(/${args.search2}/) -> "${m}" (${r.frames} frames)`);
		}
		await page.screenshot({ path: path.join(artifacts, "flamegraph.png") });

		// Reset Search restores every colour
		await page.locator("#resetsearch").click();
		const after = await page.evaluate(() => window.flamegraph.frames.every((f) =>
			f.r.getAttribute("fill") === f.fill));
		check(after && (await page.locator("#matched").textContent()).trim() === "",
			"Reset Search restores colours and clears Matched");

		check(errors.length === 0, `no page errors${errors.length ? ": " + errors.join("; ") : ""}`);
		console.log(`${check.count} checks passed; screenshots in ${artifacts}`);
	});
}

main().catch((e) => {
	console.error(`flamegraph.js: ${e.message}`);
	process.exit(1);
});
