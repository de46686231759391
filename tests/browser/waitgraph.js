#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0
//
// Open a wait-for graph (offsample blockers --graph, drawn by Graphviz) in
// Debian's Chromium and check what a reader sees: no page errors, every
// thread a box with its label, every waiter -> holder pair an arrow with
// its label, the given edge drawn in the given colour, inside the page.
//
//   node waitgraph.js --svg FILE --nodes N --edges N --edge ID --color #RRGGBB
//                     --label TEXT
//
// Screenshots go to $ARTIFACT_DIR (default $BATS_TEST_TMPDIR, else /tmp).
// Exit 0 when every check passed; otherwise the failed check is printed on
// stderr and the exit status is 1.

"use strict";

const path = require("path");
const { withPage, artifacts, parseArgs, check } = require("./chromium");

function rgb(hex) {
	const n = parseInt(hex.replace("#", ""), 16);
	return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
}

async function main() {
	const a = parseArgs(process.argv.slice(2), ["svg", "nodes", "edges", "edge", "color", "label"]);
	await withPage({ width: 1600, height: 900, args: ["--disable-gpu"] }, async (page, errors) => {
		await page.goto("file://" + path.resolve(a.svg));
		const size = await page.evaluate(() => ({
			width: Math.ceil(document.documentElement.width.baseVal.value),
			height: Math.ceil(document.documentElement.height.baseVal.value) }));
		check(size.width > 100 && size.height > 50, `SVG of ${size.width}x${size.height} pt`);
		await page.setViewportSize({ width: Math.min(size.width * 2, 4000), height: Math.min(size.height * 2, 4000) });
		const nodes = await page.locator("g.node").count();
		check(nodes === Number(a.nodes), `${nodes} thread boxes (want ${a.nodes})`);
		const edges = await page.locator("g.edge").count();
		check(edges === Number(a.edges), `${edges} arrows (want ${a.edges})`);
		// Every box and arrow is drawn with a size and its text shown.
		const empty = await page.evaluate(() => [...document.querySelectorAll("g.node, g.edge")]
			.filter((g) => { const b = g.getBBox(); return !(b.width > 0 && b.height > 0); }).length);
		check(empty === 0, "every box and arrow has a size on the page");
		const label = await page.locator("g.node text", { hasText: a.label }).count();
		check(label >= 1, `a box reads "${a.label}"`);
		const stroke = await page.evaluate((id) => {
			const p = document.querySelector(`g#${id} path`);
			return p ? getComputedStyle(p).stroke : null;
		}, a.edge);
		check(stroke === rgb(a.color), `arrow ${a.edge} drawn in ${a.color} (${stroke})`);
		await page.screenshot({ path: path.join(artifacts(), "waitgraph.png") });
		check(errors.length === 0, `no page errors${errors.length ? ": " + errors.join("; ") : ""}`);
	});
}

main().catch((e) => {
	console.error(e.message);
	process.exit(1);
});
