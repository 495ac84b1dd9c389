// Draws the report page from the JSON blob in #report-data (htmlreport/page.h) with d3 v3: one
// function per chart type of htmlreport/chart.h. Every chart is SVG (or an HTML table), so a
// test can count what was drawn. When done, the page writes performance.now() (milliseconds since
// navigation started) into #load-ms and sets data-rendered="1" on <body>.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var colour = d3.scale.category10();
  var format = d3.format(".4g"), integer = d3.format(",d"), tick = d3.format(".3s");
  var kWidth = 760;

  function text(v) {
    if (v === null || v === undefined) return "";
    if (typeof v !== "number") return String(v);
    return Number.isInteger(v) && Math.abs(v) < 1e15 ? integer(v) : format(v);
  }

  function svgFor(fig, width, height) {
    return fig.append("svg").attr("width", width).attr("height", height);
  }

  // A legend entry per name, coloured by `scale` (default: the page's colours).
  function legend(svg, names, x, y, scale) {
    var g = svg.append("g").attr("class", "legend").attr("transform", "translate(" + x + "," + y + ")");
    names.forEach(function (name, i) {
      var row = g.append("g").attr("transform", "translate(0," + i * 16 + ")");
      row.append("rect").attr("width", 10).attr("height", 10).style("fill", (scale || colour)(name));
      row.append("text").attr("x", 14).attr("y", 9).text(name);
    });
  }

  function heat(max) {
    return d3.scale.linear().domain([0, max > 0 ? max : 1]).range(["#e0e0e0", "#d7191c"]);
  }

  // Stacked bars (c.stacked): one bar per category, the series' non-negative values stacked in
  // series order.
  function drawStacked(fig, c) {
    var names = c.series.map(function (s) { return s.name; });
    var longest = d3.max(c.categories, function (s) { return s.length; }) || 1;
    var m = { top: 10, right: 180, bottom: Math.min(160, 12 + 6 * longest), left: 70 };
    var w = Math.max(kWidth, Math.min(1400, c.categories.length * 14)) - m.left - m.right, h = 240;
    var svg = svgFor(fig, w + m.left + m.right, h + m.top + m.bottom);
    var g = svg.append("g").attr("transform", "translate(" + m.left + "," + m.top + ")");
    var x = d3.scale.ordinal().domain(c.categories).rangeRoundBands([0, w], 0.15);
    var base = c.categories.map(function () { return 0; });
    var layers = c.series.map(function (s) {
      return s.values.map(function (v, i) {
        var d = { y0: base[i], y1: base[i] + Math.max(0, v), v: v, i: i };
        base[i] = d.y1;
        return d;
      });
    });
    var y = d3.scale.linear().domain([0, d3.max(base) || 1]).nice().range([h, 0]);
    c.series.forEach(function (s, k) {
      g.selectAll("rect.series-" + k).data(layers[k]).enter().append("rect")
        .attr("class", "bar stacked series-" + k)
        .attr("x", function (d) { return x(c.categories[d.i]); })
        .attr("width", Math.max(1, x.rangeBand()))
        .attr("y", function (d) { return y(d.y1); })
        .attr("height", function (d) { return y(d.y0) - y(d.y1); })
        .attr("data-value", function (d) { return String(d.v); })
        .style("fill", colour(s.name))
        .append("title").text(function (d) { return s.name + ", " + c.categories[d.i] + ": " + text(d.v) + " " + c.unit; });
    });
    var axis = d3.svg.axis().scale(x).orient("bottom");
    if (c.categories.length > 40)  // label every k-th category
      axis.tickValues(c.categories.filter(function (d, i) { return i % Math.ceil(c.categories.length / 40) === 0; }));
    g.append("g").attr("class", "axis").attr("transform", "translate(0," + h + ")").call(axis)
      .selectAll("text").style("text-anchor", "end").attr("transform", "rotate(-35)");
    g.append("g").attr("class", "axis").call(d3.svg.axis().scale(y).orient("left").ticks(6).tickFormat(tick))
      .append("text").attr("x", 4).attr("y", -2).text(c.unit);
    legend(svg, names, m.left + w + 16, m.top);
  }

  function drawBars(fig, c) {
    if (c.stacked) return drawStacked(fig, c);
    var names = c.series.map(function (s) { return s.name; });
    var longest = d3.max(c.categories, function (s) { return s.length; }) || 1;
    var m = { top: 10, right: 180, bottom: Math.min(160, 12 + 6 * longest), left: 70 };
    var w = Math.max(kWidth, c.categories.length * names.length * 14) - m.left - m.right;
    var h = 240;
    var svg = svgFor(fig, w + m.left + m.right, h + m.top + m.bottom);
    var g = svg.append("g").attr("transform", "translate(" + m.left + "," + m.top + ")");
    var x0 = d3.scale.ordinal().domain(c.categories).rangeRoundBands([0, w], 0.15);
    var x1 = d3.scale.ordinal().domain(names).rangeRoundBands([0, x0.rangeBand()]);
    var max = d3.max(c.series, function (s) { return d3.max(s.values); }) || 0;
    var min = Math.min(0, d3.min(c.series, function (s) { return d3.min(s.values); }) || 0);
    var y = d3.scale.linear().domain([min, max > min ? max : min + 1]).nice().range([h, 0]);
    var shown = function () { return true; }, base = 0;
    if (c.log) {  // positive values only, from a base below the smallest and at most 1
      shown = function (d) { return d > 0; };
      var positive = d3.merge(c.series.map(function (s) { return s.values.filter(shown); }));
      base = Math.min(1, d3.min(positive) || 1) / 2;
      y = d3.scale.log().domain([base, Math.max(2 * base, (d3.max(positive) || 1) * 1.5)]).range([h, 0]);
    }
    c.series.forEach(function (s, k) {
      var values = s.values.map(function (v, i) { return { v: v, i: i }; }).filter(function (d) { return shown(d.v); });
      g.selectAll("rect.series-" + k).data(values).enter().append("rect")
        .attr("class", "bar series-" + k)
        .attr("x", function (d) { return x0(c.categories[d.i]) + x1(s.name); })
        .attr("width", Math.max(1, x1.rangeBand()))
        .attr("y", function (d) { return y(Math.max(base, d.v)); })
        .attr("height", function (d) { return Math.abs(y(d.v) - y(base)); })
        .attr("data-value", function (d) { return String(d.v); })
        .style("fill", colour(s.name))
        .append("title").text(function (d) { return s.name + ", " + c.categories[d.i] + ": " + text(d.v) + " " + c.unit; });
    });
    if (c.log && y.domain()[0] < 1 && y.domain()[1] > 1)
      g.append("line").attr("class", "unit-line").attr("x1", 0).attr("x2", w).attr("y1", y(1)).attr("y2", y(1))
        .style("stroke", "#555").style("stroke-dasharray", "6,3");
    g.append("g").attr("class", "axis").attr("transform", "translate(0," + h + ")")
      .call(d3.svg.axis().scale(x0).orient("bottom"))
      .selectAll("text").style("text-anchor", "end").attr("transform", "rotate(-35)");
    g.append("g").attr("class", "axis").call(c.log ? d3.svg.axis().scale(y).orient("left").ticks(6, tick)
                                              : d3.svg.axis().scale(y).orient("left").ticks(6).tickFormat(tick))
      .append("text").attr("x", 4).attr("y", -2).text(c.unit);
    legend(svg, names, m.left + w + 16, m.top);
  }

  function drawLines(fig, c) {
    var m = { top: 10, right: 220, bottom: 36, left: 70 };
    var w = kWidth - m.left - m.right, h = 220;
    var svg = svgFor(fig, kWidth, h + m.top + m.bottom);
    var g = svg.append("g").attr("transform", "translate(" + m.left + "," + m.top + ")");
    var all = d3.merge(c.series.map(function (s) { return s.points; }));
    var xs = d3.extent(all, function (p) { return p[0]; }), ys = d3.extent(all, function (p) { return p[1]; });
    if (xs[0] === xs[1]) xs = [xs[0] - 1, xs[1] + 1];
    if (ys[0] === ys[1]) ys = [Math.min(0, ys[0]), ys[1] === 0 ? 1 : Math.max(0, ys[1])];
    var x = d3.scale.linear().domain(xs).range([0, w]);
    var y = d3.scale.linear().domain(ys).nice().range([h, 0]);
    var line = d3.svg.line().x(function (p) { return x(p[0]); }).y(function (p) { return y(p[1]); });
    c.series.forEach(function (s, k) {
      g.append("path").attr("class", "line").attr("d", line(s.points)).style("stroke", colour(s.name));
      if (s.points.length <= 200)
        g.selectAll("circle.series-" + k).data(s.points).enter().append("circle")
          .attr("class", "series-" + k).attr("r", 2.5)
          .attr("cx", function (p) { return x(p[0]); }).attr("cy", function (p) { return y(p[1]); })
          .style("fill", colour(s.name))
          .append("title").text(function (p) { return s.name + ": " + c.x + " " + text(p[0]) + ", " + text(p[1]); });
    });
    g.append("g").attr("class", "axis").attr("transform", "translate(0," + h + ")")
      .call(d3.svg.axis().scale(x).orient("bottom").ticks(8))
      .append("text").attr("x", w).attr("y", 30).style("text-anchor", "end").text(c.x);
    g.append("g").attr("class", "axis").call(d3.svg.axis().scale(y).orient("left").ticks(6).tickFormat(tick))
      .append("text").attr("x", 4).attr("y", -2).text(c.y);
    legend(svg, c.series.map(function (s) { return s.name; }), m.left + w + 16, m.top);
  }

  // Log-log: arithmetic intensity (MACs per HBM byte) on x, achieved MACs per cycle on y; the
  // memory roof y = bandwidth x intensity and the compute roof y = peak as two lines.
  function drawRoofline(fig, c) {
    var m = { top: 10, right: 220, bottom: 36, left: 70 };
    var w = kWidth - m.left - m.right, h = 260;
    var svg = svgFor(fig, kWidth, h + m.top + m.bottom);
    var g = svg.append("g").attr("transform", "translate(" + m.left + "," + m.top + ")");
    var pts = c.points.filter(function (p) { return p.x > 0 && p.y > 0; });
    var knee = c.peak / c.bandwidth;
    var xs = d3.extent(pts.map(function (p) { return p.x; }).concat([knee]));
    var ys = [d3.min(pts.map(function (p) { return p.y; }).concat([c.peak])), c.peak];
    var x = d3.scale.log().domain([xs[0] / 4, xs[1] * 4]).range([0, w]);
    var y = d3.scale.log().domain([ys[0] / 4, ys[1] * 2]).range([h, 0]);
    var lo = x.domain()[0], hi = x.domain()[1];
    var start = Math.max(lo, y.domain()[0] / c.bandwidth);  // where the memory roof enters
    var roofs = [{ name: "memory roof", points: [[start, c.bandwidth * start], [knee, c.peak]] },
                 { name: "compute roof", points: [[knee, c.peak], [hi, c.peak]] }];
    var line = d3.svg.line().x(function (p) { return x(p[0]); }).y(function (p) { return y(p[1]); });
    roofs.forEach(function (r, k) {
      g.append("path").attr("class", "line roof").attr("d", line(r.points)).style("stroke", "#555")
        .style("stroke-dasharray", k === 0 ? "6,3" : null)
        .append("title").text(r.name);
    });
    g.append("text").attr("class", "roof-label").attr("x", w).attr("y", y(c.peak) - 4)
      .style("text-anchor", "end").text("compute roof " + text(c.peak) + " " + c.y);
    g.append("text").attr("class", "roof-label").attr("x", x(knee) - 4).attr("y", y(c.peak) - 4)
      .style("text-anchor", "end").text("memory roof " + text(c.bandwidth) + " bytes per cycle");
    g.selectAll("circle.point").data(pts).enter().append("circle").attr("class", "point").attr("r", 4)
      .attr("cx", function (p) { return x(p.x); }).attr("cy", function (p) { return y(p.y); })
      .style("fill", function (p) { return colour(p.series); })
      .append("title").text(function (p) {
        return p.name + ": " + text(p.x) + " " + c.x + ", " + text(p.y) + " " + c.y;
      });
    g.append("g").attr("class", "axis").attr("transform", "translate(0," + h + ")")
      .call(d3.svg.axis().scale(x).orient("bottom").ticks(6, tick))
      .append("text").attr("x", w).attr("y", 30).style("text-anchor", "end").text(c.x);
    g.append("g").attr("class", "axis").call(d3.svg.axis().scale(y).orient("left").ticks(6, tick))
      .append("text").attr("x", 4).attr("y", -2).text(c.y);
    var names = [];
    pts.forEach(function (p) { if (names.indexOf(p.series) < 0) names.push(p.series); });
    legend(svg, names, m.left + w + 16, m.top);
  }

  function drawTable(fig, c) {
    var table = fig.append("table");
    table.append("thead").append("tr").selectAll("th").data(c.columns).enter().append("th")
      .text(function (d) { return d; });
    table.append("tbody").selectAll("tr").data(c.rows).enter().append("tr")
      .selectAll("td").data(function (r) { return r; }).enter().append("td")
      .attr("data-value", function (v) { return typeof v === "number" ? String(v) : null; })
      .text(text);
  }

  // Values also as data-key / data-run / data-value, the JSON's numbers unformatted.
  function drawFacts(fig, c) {
    var table = fig.append("table").attr("class", "facts");
    table.append("thead").append("tr").selectAll("th").data([""].concat(c.runs)).enter()
      .append("th").text(function (d) { return d; });
    var rows = table.append("tbody").selectAll("tr").data(c.rows).enter().append("tr");
    rows.append("th").text(function (r) { return r.label; });
    rows.each(function (r) {
      d3.select(this).selectAll("td").data(r.values).enter().append("td")
        .attr("data-key", r.key)
        .attr("data-run", function (v, i) { return i; })
        .attr("data-value", function (v) { return v === null ? null : String(v); })
        .text(function (v) { return v === null ? "" : text(v) + (r.unit && typeof v === "number" ? " " + r.unit : ""); });
    });
  }

  function drawTopology(fig, c) {
    var size = 380, pad = 40, n = c.nodes;
    var pos = [];
    for (var i = 0; i < n; ++i) {
      if (c.layout === "grid") {
        var cols = c.columns, rows = Math.ceil(n / cols);
        pos.push([pad + (i % cols) * (size - 2 * pad) / Math.max(1, cols - 1),
                  pad + Math.floor(i / cols) * (size - 2 * pad) / Math.max(1, rows - 1)]);
      } else {
        var a = 2 * Math.PI * i / n - Math.PI / 2;
        pos.push([size / 2 + (size / 2 - pad) * Math.cos(a), size / 2 + (size / 2 - pad) * Math.sin(a)]);
      }
    }
    var max = d3.max(c.links, function (l) { return l.value; }) || 0, scale = heat(max);
    var svg = svgFor(fig, size + 260, size);
    svg.selectAll("line.link").data(c.links).enter().append("line").attr("class", "link")
      .each(function (l) {
        var a = pos[l.from], b = pos[l.to], dx = b[0] - a[0], dy = b[1] - a[1];
        var len = Math.sqrt(dx * dx + dy * dy) || 1, ox = -dy / len * 3, oy = dx / len * 3;
        d3.select(this).attr("x1", a[0] + ox).attr("y1", a[1] + oy).attr("x2", b[0] + ox).attr("y2", b[1] + oy);
      })
      .style("stroke", function (l) { return scale(l.value); }).style("stroke-width", 3)
      .append("title").text(function (l) { return l.from + " -> " + l.to + ": " + text(l.value) + " " + c.unit; });
    var nodes = svg.selectAll("g.node").data(pos).enter().append("g").attr("class", "node")
      .attr("transform", function (p) { return "translate(" + p[0] + "," + p[1] + ")"; });
    nodes.append("circle").attr("r", 10).style("fill", "#fff").style("stroke", "#333");
    nodes.append("text").attr("class", "node-label").attr("dy", 4).style("text-anchor", "middle")
      .text(function (p, i) { return i; });
    svg.append("text").attr("x", size + 10).attr("y", 20).text("busiest link: " + text(max) + " " + c.unit);
  }

  // Cores coloured by community (c.colour_by) with a legend of the communities, else by processor.
  function drawMesh(fig, c) {
    var cell = 36, gap = 30;
    var pw = c.width * cell, ph = c.height * cell;
    var byCommunity = c.colour_by === "community";
    var group = function (d) { return byCommunity ? "community " + d.community : "processor " + d.processor; };
    var groups = d3.set(c.cells.map(group)).values().sort(function (a, b) {
      return d3.ascending(+a.split(" ")[1], +b.split(" ")[1]);
    });
    var fill = !byCommunity ? colour
      : (groups.length <= 10 ? d3.scale.category10() : d3.scale.category20()).domain(groups);
    var svg = svgFor(fig, c.processors * (pw + gap) + 220, Math.max(ph + 20, 40 + 16 * groups.length));
    var max = d3.max(c.links, function (l) { return l.value; }) || 0, scale = heat(max);
    var origin = function (p) { return p * (pw + gap) + 10; };
    svg.selectAll("rect.core").data(c.cells).enter().append("rect").attr("class", "core")
      .attr("x", function (d) { return origin(d.processor) + d.x * cell + 3; })
      .attr("y", function (d) { return d.y * cell + 13; })
      .attr("width", cell - 6).attr("height", cell - 6)
      .attr("data-community", function (d) { return byCommunity ? String(d.community) : null; })
      .style("fill", function (d) { return fill(group(d)); }).style("opacity", 0.6)
      .append("title").text(function (d) {
        return d.label + " on processor " + d.processor + " (" + d.x + "," + d.y + ")" +
          (byCommunity ? ", community " + d.community : "");
      });
    var step = { E: [1, 0], W: [-1, 0], N: [0, -1], S: [0, 1] };
    svg.selectAll("line.link").data(c.links).enter().append("line").attr("class", "link")
      .each(function (l) {
        var s = step[l.dir] || [0, 0], o = 4;
        var cx = origin(l.processor) + l.x * cell + cell / 2 + s[1] * o, cy = l.y * cell + 10 + cell / 2 + s[0] * o;
        d3.select(this).attr("x1", cx + s[0] * cell * 0.3).attr("y1", cy + s[1] * cell * 0.3)
          .attr("x2", cx + s[0] * cell * 0.7).attr("y2", cy + s[1] * cell * 0.7);
      })
      .style("stroke", function (l) { return scale(l.value); }).style("stroke-width", 3)
      .append("title").text(function (l) { return "(" + l.x + "," + l.y + ") " + l.dir + ": " + l.value + " routes"; });
    svg.append("text").attr("x", c.processors * (pw + gap) + 10).attr("y", 24)
      .text("busiest link: " + text(max) + " routes");
    if (byCommunity) legend(svg, groups, c.processors * (pw + gap) + 10, 36, fill);
  }

  // Spans in [t0, t1] of a track: by binary search on the sorted starts, reaching back by the
  // track's longest span.
  function window_of(t, t0, t1) {
    var lo = d3.bisectLeft(t.start, t0 - t.maxDur), hi = d3.bisectLeft(t.start, t1);
    return [lo, hi];
  }

  var timelines = 0;  // clip-path ids are per timeline

  function drawTimeline(fig, c) {
    var longest = d3.max(c.tracks, function (t) { return t.name.length; }) || 0;
    var m = { top: 24, left: Math.max(120, 10 + 7 * longest), right: 20 }, row = 20, kMaxSpans = 2000, kBins = 600;
    var clip = "timeline-clip-" + timelines++;
    var w = Math.max(kWidth, 1000) - m.left - m.right;
    var tracks = c.tracks;
    tracks.forEach(function (t) {
      var start = new Float64Array(t.start_delta.length), at = 0;
      for (var i = 0; i < start.length; ++i) start[i] = at += t.start_delta[i];
      t.start = start;
      t.maxDur = d3.max(t.dur) || 0;
    });
    var controls = fig.append("div").attr("class", "timeline-controls");
    controls.append("span").text(c.events + " spans" + (c.dropped ? " (" + c.dropped + " dropped by the trace)" : "") + ". ");
    var shown = controls.append("span");
    var svg = svgFor(fig, w + m.left + m.right, m.top + tracks.length * row + 10);
    svg.append("defs").append("clipPath").attr("id", clip).append("rect")
      .attr("width", w).attr("height", tracks.length * row);
    var g = svg.append("g").attr("transform", "translate(" + m.left + "," + m.top + ")");
    var x = d3.scale.linear().domain([0, c.end || 1]).range([0, w]);
    var axis = g.append("g").attr("class", "axis");
    var body = g.append("g").attr("clip-path", "url(#" + clip + ")");
    body.append("rect").attr("width", w).attr("height", tracks.length * row).style("fill", "#fafafa");
    var rows = body.selectAll("g.track").data(tracks).enter().append("g").attr("class", "track")
      .attr("transform", function (t, i) { return "translate(0," + i * row + ")"; });
    g.selectAll("text.track-name").data(tracks).enter().append("text").attr("class", "node-label")
      .attr("x", -6).attr("y", function (t, i) { return i * row + 14; }).style("text-anchor", "end")
      .text(function (t) { return t.name; });

    function spans(t) {
      var d = x.domain(), r = window_of(t, d[0], d[1]), out = [];
      if (r[1] - r[0] <= kMaxSpans) {
        for (var i = r[0]; i < r[1]; ++i)
          if (t.start[i] + t.dur[i] >= d[0]) out.push({ s: t.start[i], e: t.start[i] + t.dur[i], o: 1, name: c.names[t.kind[i]] });
        return out;
      }
      var width = (d[1] - d[0]) / kBins, busy = new Float64Array(kBins);
      for (var j = r[0]; j < r[1]; ++j) {
        var s = Math.max(t.start[j], d[0]), e = Math.min(t.start[j] + t.dur[j], d[1]);
        for (var b = Math.floor((s - d[0]) / width); e > s && b < kBins; ++b) {
          var be = d[0] + (b + 1) * width, part = Math.min(e, be) - s;
          busy[b] += part;
          s += part;
        }
      }
      for (var k = 0; k < kBins; ++k)
        if (busy[k] > 0) out.push({ s: d[0] + k * width, e: d[0] + (k + 1) * width, o: Math.min(1, 0.15 + busy[k] / width), name: "busy " + format(100 * busy[k] / width) + "%" });
      return out;
    }

    function redraw() {
      axis.call(d3.svg.axis().scale(x).orient("top").ticks(10).tickFormat(d3.format(".4s")));
      var detail = 0;
      rows.each(function (t) {
        var list = spans(t);
        var rects = d3.select(this).selectAll("rect.span").data(list);
        rects.enter().append("rect").attr("class", "span").attr("height", row - 4).attr("y", 2).append("title");
        rects.exit().remove();
        rects.attr("x", function (d) { return x(d.s); })
          .attr("width", function (d) { return Math.max(1, x(d.e) - x(d.s)); })
          .style("fill", colour(t.name)).style("opacity", function (d) { return d.o; })
          .select("title").text(function (d) { return t.name + ": " + d.name + " @ " + format(d.s) + " " + c.unit; });
        if (list.length && list[0].o === 1) ++detail;
      });
      var d = x.domain();
      shown.text("Showing " + format(d[0]) + " to " + format(d[1]) + " " + c.unit + "; " + detail + " of " + tracks.length + " tracks span by span (others as busy share per bin).");
    }
    var pending = false;
    var zoom = d3.behavior.zoom().x(x).scaleExtent([1, Math.max(1, (c.end || 1) * 1e4)]).on("zoom", function () {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(function () { pending = false; redraw(); });
    });
    svg.call(zoom);
    controls.append("button").text("reset zoom").on("click", function () {
      zoom.scale(1).translate([0, 0]);
      x.domain([0, c.end || 1]);
      redraw();
    });
    redraw();
  }

  var draw = { bars: drawBars, lines: drawLines, table: drawTable, facts: drawFacts,
               topology: drawTopology, mesh: drawMesh, timeline: drawTimeline,
               roofline: drawRoofline };
  var main = d3.select("#sections");
  data.sections.forEach(function (s) {
    d3.select("#toc").append("a").attr("href", "#" + s.id).text(s.title);
    var section = main.append("section").attr("id", s.id);
    section.append("h2").text(s.title);
    s.charts.forEach(function (c) {
      var fig = section.append("figure").attr("class", "chart").attr("data-chart", c.type);
      if (c.title) fig.append("figcaption").text(c.title);
      try {
        if (draw[c.type]) draw[c.type](fig, c);
        else console.error("unknown chart type " + c.type);
      } catch (e) {
        console.error("section " + s.id + ", chart " + c.type + ": " + e);
      }
    });
  });
  d3.select("#load-ms").text(performance.now().toFixed(0));
  document.body.setAttribute("data-rendered", "1");
})();
