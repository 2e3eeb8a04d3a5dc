/// Credentials for authentications
#[derive(Debug, Clone)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}
