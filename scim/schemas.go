package scim

import (
	"github.com/elimity-com/scim/optional"
	"github.com/elimity-com/scim/schema"
)

// Schema URNs of the resources and messages this package serves.
const (
	UserSchema          = schema.UserSchema
	GroupSchema         = schema.GroupSchema
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

var roleValues = []string{string(RoleMember), string(RoleAnalyst), string(RoleAdmin)}

func roleAttribute(description string) schema.CoreAttribute {
	return schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{
		CanonicalValues: roleValues,
		Description:     optional.NewString(description),
		Name:            "role",
	}))
}

// extensionSchema is the vendor extension of the User resource.
func extensionSchema() schema.Schema {
	return schema.Schema{
		ID:          ExtensionSchema,
		Name:        optional.NewString("CelonisUser"),
		Description: optional.NewString("Team role and invitation of a user."),
		Attributes: []schema.CoreAttribute{
			roleAttribute("Role of the user in the team: MEMBER (the default), ANALYST or ADMIN."),
			schema.SimpleCoreAttribute(schema.SimpleBooleanParams(schema.BooleanParams{
				Description: optional.NewString("Whether an invitation e-mail is sent when the user is created. Accepts \"true\"/\"false\" strings too."),
				Name:        "sendEmailOnInvitation",
			})),
		},
	}
}

// enterpriseSchema is RFC 7643's enterprise User extension, which Entra ID's default
// attribute mappings send (department, employeeNumber, manager, ...).
func enterpriseSchema() schema.Schema { return schema.ExtensionEnterpriseUser() }

// userExtensions are the extensions of the User resource.
func userExtensions() []schema.Schema { return []schema.Schema{extensionSchema(), enterpriseSchema()} }

// userSchema is the core User schema.
func userSchema() schema.Schema { return schema.CoreUserSchema() }

// groupSchema is the core Group schema with the group's role added.
func groupSchema() schema.Schema {
	s := schema.CoreGroupSchema()
	s.Attributes = append(s.Attributes[:len(s.Attributes):len(s.Attributes)],
		roleAttribute("Role the group grants its members: MEMBER, ANALYST or ADMIN."))
	return s
}
