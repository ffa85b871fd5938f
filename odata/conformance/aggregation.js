#!/usr/bin/env node
// Aggregation and search requests of real OData consumers for the Go tests of package
// odata (apply_clients_test.go). Each command prints one JSON value on stdout; the Go test
// makes the assertions.
//
//   aggregation.js aggrid URL REQUEST
//                 ag-grid-odata's OdataServerSideProvider (server-side row model) over the
//                 entity set URL, getRows with REQUEST (JSON: startRow, endRow,
//                 rowGroupCols, groupKeys, valueCols, sortModel, filterModel):
//                 {"rows", "count", "queries"} (the query strings it sent)
//   aggregation.js odataquery URL OPTIONS
//                 odata-query's buildQuery(OPTIONS as JSON) appended to the entity set URL,
//                 fetched: {"query", "status", "body"}
//   aggregation.js cds-search DIR ROOT TERM
//                 SAP CAP (@sap/cds) as a remote OData V4 service over the model
//                 DIR/shop.cds: SELECT ID, STATUS from the orders .search(TERM) ordered
//                 by ID: {"rows"}, or {"error"} with CAP's message
"use strict";

async function getJSON(url, queries) {
  queries.push(decodeURIComponent(url.slice(url.indexOf("?") + 1)));
  const resp = await fetch(url);
  const body = await resp.json();
  if (!resp.ok) throw new Error(`${resp.status} ${JSON.stringify(body)}`);
  return body;
}

async function main(argv) {
  const [cmd, ...args] = argv;
  switch (cmd) {
    case "aggrid": {
      const [url, request] = args;
      const { OdataServerSideProvider } = require("ag-grid-odata");
      const queries = [];
      const provider = new OdataServerSideProvider({
        callApi: (q) => getJSON(url + q, queries),
      });
      const req = { pivotCols: [], pivotMode: false, valueCols: [], rowGroupCols: [], groupKeys: [], sortModel: [], filterModel: {}, ...JSON.parse(request) };
      return await new Promise((resolve, reject) => {
        provider.getRows({
          request: req,
          parentNode: { level: req.groupKeys.length - 1 },
          api: { getModel: () => ({ isLastRowIndexKnown: () => false }) },
          columnApi: { setPivotResultColumns: () => {} },
          success: ({ rowData, rowCount }) => {
            // The count of groups may come in a second request.
            setTimeout(() => resolve({ rows: rowData, count: rowCount === undefined ? null : rowCount, queries }), 200);
          },
          fail: () => reject(new Error("ag-grid-odata called fail: " + queries.join(" | "))),
        });
      }).then((r) => r);
    }
    case "odataquery": {
      const [url, options] = args;
      const buildQuery = require("odata-query").default;
      const query = buildQuery(JSON.parse(options));
      const resp = await fetch(url + query);
      return { query, status: resp.status, body: await resp.json() };
    }
    case "cds-search": {
      const [dir, root, term] = args;
      const cds = require("@sap/cds");
      cds.log("remote", "error");
      const csn = await cds.load(`${dir}/shop.cds`);
      cds.model = cds.linked(cds.compile.for.nodejs(csn));
      const srv = await cds.connect.to("shop", { kind: "odata", model: `${dir}/shop.cds`, credentials: { url: root } });
      const { ORDERS_entries } = srv.entities;
      try {
        return { rows: await srv.run(SELECT.from(ORDERS_entries).columns("ID", "STATUS").search(term).orderBy("ID")) };
      } catch (err) {
        const reason = err.reason && err.reason.message;
        return { error: reason && !err.message.includes(reason) ? `${err.message} ${reason}` : err.message };
      }
    }
  }
  throw new Error(`unknown command ${cmd}`);
}

main(process.argv.slice(2)).then(
  (out) => process.stdout.write(JSON.stringify(out) + "\n"),
  (err) => {
    process.stderr.write(String((err && err.stack) || err) + "\n");
    process.exitCode = 1;
  }
);
