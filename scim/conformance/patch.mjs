// Applies PATCH requests to resources with two independent RFC 7644 implementations,
// scim-patch and scimmy, for the differential test of package scim
// (scim/differential_test.go).
//
// stdin: a JSON array of cases {"kind": "User" | "Group", "resource": {...}, "ops": [...]}.
// stdout: a JSON array with, for each case, {"scimPatch": outcome, "scimmy": outcome}, an
// outcome being {"ok": true, "resource": {...}} or {"ok": false, "error": "..."}.
import SCIMMY from "scimmy";
import scimPatchModule from "scim-patch";

const {scimPatch} = scimPatchModule;
SCIMMY.Schemas.User.extend(SCIMMY.Schemas.EnterpriseUser, false);
const patchOpSchema = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

function failure(e) {
	return {ok: false, error: `${e?.constructor?.name ?? "Error"}: ${e?.scimType ?? ""} ${e?.message ?? String(e)}`};
}

function withScimPatch(c) {
	try {
		const out = scimPatch(structuredClone(c.resource), structuredClone(c.ops), {mutateDocument: false, treatMissingAsAdd: true});
		return {ok: true, resource: out};
	} catch (e) {
		return failure(e);
	}
}

async function withScimmy(c) {
	try {
		const schema = c.kind === "Group" ? SCIMMY.Schemas.Group : SCIMMY.Schemas.User;
		const source = new schema(structuredClone(c.resource));
		const message = new SCIMMY.Messages.PatchOp({schemas: [patchOpSchema], Operations: structuredClone(c.ops)});
		const out = await message.apply(source);
		// apply answers undefined when the operations changed nothing.
		return {ok: true, resource: JSON.parse(JSON.stringify(out ?? source))};
	} catch (e) {
		return failure(e);
	}
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const results = [];
for (const c of cases) {
	results.push({scimPatch: withScimPatch(c), scimmy: await withScimmy(c)});
}
process.stdout.write(JSON.stringify(results));
