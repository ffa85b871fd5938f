#!/usr/bin/env node
// Probes of real OData consumers for the Go tests of package odata (conformance_test.go).
// Each command reads what the Go test hands it and prints one JSON value on stdout; the
// Go test makes the assertions.
//
//   probe.js csdl-schema FILE     validate CSDL JSON against odata-csdl's csdl.schema.json
//                                 with ajv: {"valid": bool, "errors": [...]}
//   probe.js xml2json FILE        CSDL XML converted by odata-csdl's xml2json: {"json", "messages"}
//   probe.js edmx FILE            what @sap-ux/edmx-parser reads from CSDL XML: entity types
//                                 with keys, properties and navigation properties, entity
//                                 sets
//   probe.js client ROOT SET FILTER ORDERBY TOP
//                                 query an entity set with @odata/client (OData V4), with
//                                 $filter, $orderby ("FIELD asc|desc"), $top and $count:
//                                 {"count", "rows"}
//   probe.js client-expand ROOT SET NAV
//                                 query an entity set with @odata/client, expanding the
//                                 navigation property NAV, ordered by ID descending: the
//                                 first page, {"rows"}
//   probe.js client-error ROOT SET FILTER
//                                 query an entity set with @odata/client's EntitySet.query
//                                 and a $filter the service refuses: {"message"} of the
//                                 error it throws (it reads the OData error.message)
//   probe.js odatajs-pages URL [ACCEPT]
//                                 read an entity set with Apache Olingo odatajs, following
//                                 @odata.nextLink to the end, sending Accept: ACCEPT
//                                 (default application/json): {"pages", "rows", "count"},
//                                 count the first page's @odata.count as odatajs read it
//   probe.js client-key ROOT SET NAME KEY...
//                                 retrieve entities by integer key with @odata/client's
//                                 EntitySet.retrieve, as SET(KEY) and as SET(NAME=KEY), and
//                                 an absent one (key 1000000): {"byKey", "byName", "missing"}
//                                 (the message retrieve throws for the absent one)
//   probe.js node-version         {"major"}: the major version of node
//   probe.js cds DIR ROOT KEY N   SAP CAP (@sap/cds) as a remote OData V4 service over the
//                                 model DIR/shop.cds: SELECT.one by key KEY (CAP's
//                                 getByKey, a SET('KEY') path) and SELECT with an "in" list
//                                 of the N ids O1..ON (longer than CAP's 1028-character GET,
//                                 so CAP sends it in a $batch): {"one", "rows"}
//   probe.js cds-where DIR ROOT WHERE N
//                                 SAP CAP as above: SELECT ID from the orders where WHERE
//                                 (CQL, such as tolower(STATUS) = 'open'), and, when N > 0,
//                                 ID in the N ids O1..ON (then sent in a $batch), ordered by
//                                 ID: {"rows"}, or {"error"} with CAP's message when the
//                                 request failed
"use strict";

const fs = require("node:fs");

async function main(argv) {
  const [cmd, ...args] = argv;
  switch (cmd) {
    case "csdl-schema": {
      const Ajv = require("ajv");
      const schema = require("odata-csdl/schemas/csdl.schema.json");
      const ajv = new Ajv({ strict: false, allErrors: true });
      const validate = ajv.compile(schema);
      const valid = validate(JSON.parse(fs.readFileSync(args[0], "utf8")));
      return { valid, errors: validate.errors || [] };
    }
    case "xml2json": {
      const { xml2json } = require("odata-csdl");
      const messages = [];
      const json = xml2json(fs.readFileSync(args[0]), { messages });
      return { json, messages: messages.map((m) => m.message) };
    }
    case "edmx": {
      const { parse } = require("@sap-ux/edmx-parser");
      const schema = parse(fs.readFileSync(args[0], "utf8")).schema;
      return {
        namespace: schema.namespace,
        container: schema.entityContainer.name,
        entityTypes: schema.entityTypes.map((t) => ({
          name: t.fullyQualifiedName,
          keys: t.keys.map((k) => k.name),
          properties: t.entityProperties.map((p) => ({
            name: p.name,
            type: p.type,
            nullable: p.nullable,
          })),
          navigation: t.navigationProperties.map((n) => ({
            name: n.name,
            target: n.targetTypeName,
            collection: n.isCollection,
            partner: n.partner || "",
          })),
        })),
        entitySets: schema.entitySets.map((s) => ({
          name: s.name,
          entityType: s.entityTypeName,
        })),
      };
    }
    case "client": {
      const [root, set, filter, orderby, top] = args;
      const { OData } = require("@odata/client");
      const client = OData.New4({ serviceEndpoint: root });
      const [field, order] = orderby.split(" ");
      const params = client
        .newParam()
        .filter(filter)
        .orderby(field, order)
        .top(Number(top))
        .count(true);
      const res = await client.newRequest({ collection: set, params });
      if (res.error) {
        throw new Error(JSON.stringify(res.error));
      }
      return { count: res["@odata.count"], rows: res.value };
    }
    case "client-expand": {
      const [root, set, nav] = args;
      const { OData } = require("@odata/client");
      const client = OData.New4({ serviceEndpoint: root });
      const params = client.newParam().expand(nav).orderby("ID", "desc");
      const res = await client.newRequest({ collection: set, params });
      if (res.error) {
        throw new Error(JSON.stringify(res.error));
      }
      return { rows: res.value };
    }
    case "node-version":
      return { major: Number(process.versions.node.split(".")[0]) };
    case "client-error": {
      const [root, set, filter] = args;
      const { OData } = require("@odata/client");
      const client = OData.New4({ serviceEndpoint: root });
      try {
        const rows = await client.getEntitySet(set).query(client.newParam().filter(filter));
        return { message: null, rows: rows === undefined ? null : rows };
      } catch (err) {
        return { message: err.message };
      }
    }
    case "client-key": {
      const [root, set, name, ...keys] = args;
      const { OData } = require("@odata/client");
      const client = OData.New4({ serviceEndpoint: root });
      const es = client.getEntitySet(set);
      const byKey = [];
      const byName = [];
      for (const k of keys) {
        byKey.push(await es.retrieve(Number(k)));
        byName.push(await es.retrieve({ [name]: Number(k) }));
      }
      let missing = null;
      try {
        await es.retrieve(1000000);
      } catch (err) {
        missing = err.message;
      }
      return { byKey, byName, missing };
    }
    case "odatajs-pages": {
      const odatajs = require("odatajs/index.js");
      let url = args[0];
      const accept = args[1] || "application/json";
      const rows = [];
      let pages = 0;
      let count;
      while (url) {
        const data = await new Promise((resolve, reject) =>
          odatajs.oData.read(
            { requestUri: url, headers: { Accept: accept } },
            (d) => resolve(d),
            (e) => reject(new Error(`${e.message}: ${e.response && e.response.body}`))
          )
        );
        if (pages === 0) {
          count = data["@odata.count"];
        }
        pages++;
        rows.push(...data.value);
        url = data["@odata.nextLink"];
      }
      return { pages, rows, count };
    }
    case "cds": {
      const [dir, root, key, n] = args;
      const cds = require("@sap/cds");
      cds.log("remote", "error");
      const csn = await cds.load(`${dir}/shop.cds`);
      cds.model = cds.linked(cds.compile.for.nodejs(csn));
      const srv = await cds.connect.to("shop", { kind: "odata", model: `${dir}/shop.cds`, credentials: { url: root } });
      const { ORDERS_entries } = srv.entities;
      const one = await srv.run(SELECT.one.from(ORDERS_entries, key).columns("ID", "STATUS", "NET"));
      const ids = Array.from({ length: Number(n) }, (_, i) => `O${i + 1}`);
      const rows = await srv.run(SELECT.from(ORDERS_entries).columns("ID").where({ ID: { in: ids } }));
      return { one, rows };
    }
    case "cds-where": {
      const [dir, root, where, n] = args;
      const cds = require("@sap/cds");
      cds.log("remote", "error");
      const csn = await cds.load(`${dir}/shop.cds`);
      cds.model = cds.linked(cds.compile.for.nodejs(csn));
      const srv = await cds.connect.to("shop", { kind: "odata", model: `${dir}/shop.cds`, credentials: { url: root } });
      const { ORDERS_entries } = srv.entities;
      let q = SELECT.from(ORDERS_entries).columns("ID").where(where);
      if (Number(n) > 0) {
        q = q.and({ ID: { in: Array.from({ length: Number(n) }, (_, i) => `O${i + 1}`) } });
      }
      try {
        return { rows: await srv.run(q.orderBy("ID")) };
      } catch (err) {
        // A request in a $batch fails with a generic message; the server's is the reason.
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
