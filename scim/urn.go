package scim

// Schema URNs of the resources and messages of SCIM (RFC 7643, RFC 7644) and of the
// extensions this package knows.
const (
	UserSchema          = "urn:ietf:params:scim:schemas:core:2.0:User"
	GroupSchema         = "urn:ietf:params:scim:schemas:core:2.0:Group"
	ExtensionSchema     = "urn:celonis:params:scim:schemas:extension:2.0:User"
	EnterpriseSchema    = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	ListResponseSchema  = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	SearchRequestSchema = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"
	BulkRequestSchema   = "urn:ietf:params:scim:api:messages:2.0:BulkRequest"
	BulkResponseSchema  = "urn:ietf:params:scim:api:messages:2.0:BulkResponse"
	PatchOpSchema       = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	ErrorSchema         = "urn:ietf:params:scim:api:messages:2.0:Error"
	SPCSchema           = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
)
